//! Qwen2-VL / Qwen2.5-VL / Qwen3-VL image processor (transformers' `Qwen2VLImageProcessor`):
//! `smart_resize` to multiples of `patch_size × merge_size` within [min_pixels, max_pixels],
//! Pillow resize, rescale + normalize, then patches of `C × temporal_patch_size × P × P`
//! (the single frame repeated over the temporal axis) in merge-window order.

use super::config::QwenVlConfig;
use super::error::ImageError;
use super::normalize::Lut;
use super::resample::{resize, Rgb8};

/// transformers' `smart_resize`: Python's `round` rounds half to even.
pub fn smart_resize(height: u64, width: u64, factor: u64, min_pixels: u64, max_pixels: u64) -> Result<(u64, u64), ImageError> {
    let (h, w) = (height as f64, width as f64);
    let ratio = h.max(w) / h.min(w);
    if ratio > 200.0 {
        return Err(ImageError::Shape(format!(
            "{width}x{height}: the aspect ratio must be under 200, got {ratio}"
        )));
    }
    let f = factor as f64;
    let mut h_bar = (h / f).round_ties_even() as u64 * factor;
    let mut w_bar = (w / f).round_ties_even() as u64 * factor;
    if h_bar * w_bar > max_pixels {
        let beta = ((height * width) as f64 / max_pixels as f64).sqrt();
        h_bar = factor.max((h / beta / f).floor() as u64 * factor);
        w_bar = factor.max((w / beta / f).floor() as u64 * factor);
    } else if h_bar * w_bar < min_pixels {
        let beta = (min_pixels as f64 / (height * width) as f64).sqrt();
        h_bar = (h * beta / f).ceil() as u64 * factor;
        w_bar = (w * beta / f).ceil() as u64 * factor;
    }
    Ok((h_bar, w_bar))
}

pub struct QwenOut {
    /// Little-endian float32 values, as bytes.
    pub pixel_values: Vec<u8>,
    /// `[grid_t * grid_h * grid_w, C * T * P * P]`
    pub shape: [u32; 2],
    pub grid_thw: [u32; 3],
    pub num_tokens: u32,
}

/// Grid and token count for an image of `height × width` (no pixels touched).
pub fn grid(c: &QwenVlConfig, height: u64, width: u64) -> Result<(u64, u64), ImageError> {
    let factor = (c.patch_size * c.merge_size) as u64;
    let (h, w) = if c.common.do_resize {
        smart_resize(height, width, factor, c.min_pixels, c.max_pixels)?
    } else if height % factor == 0 && width % factor == 0 {
        (height, width)
    } else {
        return Err(ImageError::Shape(format!("{width}x{height} is not a multiple of {factor} and resizing is off")));
    };
    Ok((h, w))
}

pub fn process(c: &QwenVlConfig, img: &Rgb8) -> Result<QwenOut, ImageError> {
    let (h, w) = grid(c, img.height as u64, img.width as u64)?;
    let resized;
    let img = if (h as usize, w as usize) != (img.height, img.width) {
        resized = resize(img, w as usize, h as usize, c.common.resample);
        &resized
    } else {
        img
    };
    let lut = Lut::new(&c.common).le_bytes();
    let p = c.patch_size as usize;
    let ms = c.merge_size as usize;
    let t = c.temporal_patch_size as usize;
    let (gh, gw) = (img.height / p, img.width / p);
    let row_len = 3 * t * p * p;
    let mut out = Vec::with_capacity(gh * gw * row_len * 4);
    let mut patch = vec![0u8; p * p * 4];
    for bh in 0..gh / ms {
        for bw in 0..gw / ms {
            for mh in 0..ms {
                for mw in 0..ms {
                    let y0 = (bh * ms + mh) * p;
                    let x0 = (bw * ms + mw) * p;
                    for (ch, table) in lut.iter().enumerate() {
                        for py in 0..p {
                            let line = &img.data[((y0 + py) * img.width + x0) * 3..];
                            for px in 0..p {
                                let at = (py * p + px) * 4;
                                patch[at..at + 4].copy_from_slice(&table[line[px * 3 + ch] as usize]);
                            }
                        }
                        for _ in 0..t {
                            out.extend_from_slice(&patch);
                        }
                    }
                }
            }
        }
    }
    Ok(QwenOut {
        pixel_values: out,
        shape: [(gh * gw) as u32, row_len as u32],
        grid_thw: [1, gh as u32, gw as u32],
        num_tokens: (gh * gw / (ms * ms)) as u32,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smart_resize_matches_transformers() {
        // Values from transformers' smart_resize (factor 28, min 3136, max 12845056).
        let max = 12845056;
        assert_eq!(smart_resize(224, 224, 28, 3136, max).unwrap(), (224, 224));
        assert_eq!(smart_resize(70, 42, 28, 3136, max).unwrap(), (56, 56)); // 2.5 and 1.5 round to even
        assert_eq!(smart_resize(10, 10, 28, 3136, max).unwrap(), (56, 56));
        assert_eq!(smart_resize(1, 150, 28, 3136, max).unwrap(), (28, 700));
        assert!(smart_resize(1, 201, 28, 3136, max).is_err());
        assert_eq!(smart_resize(8000, 6000, 28, 3136, max).unwrap(), (4116, 3080));
    }
}
