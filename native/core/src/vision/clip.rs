//! CLIP-tower image processor (transformers' `CLIPImageProcessor`, used by LLaVA-1.5 and
//! other LLaVA-style models): resize the shortest edge (or to an exact size), center crop
//! (zero-padding when the image is smaller than the crop), rescale + normalize; output is
//! channels-first `[3, H, W]`.
//!
//! Only the cropped window of the resized image is computed (see `resample::resize_window`).

use super::config::{ClipConfig, ClipResize};
use super::error::ImageError;
use super::normalize::Lut;
use super::resample::{resize_window, Window};
use super::resample::Rgb8;

pub struct ClipOut {
    /// Little-endian float32 values, as bytes.
    pub pixel_values: Vec<u8>,
    /// `[3, H, W]`
    pub shape: [u32; 3],
    pub num_tokens: u32,
}

/// Largest resized edge accepted: transformers would allocate it whole; Portico computes
/// only the crop but still refuses absurd shapes.
const MAX_EDGE: u64 = 1 << 20;

/// transformers' `get_resize_output_image_size(default_to_square=False)`: `(height, width)`.
pub fn resized_size(c: &ClipConfig, height: u64, width: u64) -> Result<(u64, u64), ImageError> {
    if !c.common.do_resize {
        return Ok((height, width));
    }
    let (h, w) = match c.size {
        ClipResize::Exact { height, width } => (height as u64, width as u64),
        ClipResize::ShortestEdge(s) => {
            let s = s as u64;
            let (short, long) = if width <= height { (width, height) } else { (height, width) };
            let new_long = ((s * long) as f64 / short as f64) as u64;
            if width <= height {
                (new_long, s)
            } else {
                (s, new_long)
            }
        }
    };
    if h == 0 || w == 0 || h > MAX_EDGE || w > MAX_EDGE {
        return Err(ImageError::Shape(format!("{width}x{height} resizes to {w}x{h}")));
    }
    Ok((h, w))
}

/// Offset of the crop in resized coordinates (negative: zero padding before the image),
/// as transformers' `center_crop` places it.
fn crop_offset(size: u64, crop: u64) -> i64 {
    if size >= crop {
        ((size - crop) / 2) as i64
    } else {
        -(((crop - size) as i64 + 1) / 2)
    }
}

pub fn process(c: &ClipConfig, img: &Rgb8) -> Result<ClipOut, ImageError> {
    let (h, w) = resized_size(c, img.height as u64, img.width as u64)?;
    let (ch, cw) = c.crop.map(|(a, b)| (a as u64, b as u64)).unwrap_or((h, w));
    let (oy, ox) = (crop_offset(h, ch), crop_offset(w, cw));
    // The part of the crop that lies on the resized image.
    let win = Window {
        x0: ox.max(0) as usize,
        x1: (ox + cw as i64).min(w as i64) as usize,
        y0: oy.max(0) as usize,
        y1: (oy + ch as i64).min(h as i64) as usize,
    };
    let part = if c.common.do_resize {
        resize_window(img, w as usize, h as usize, c.common.resample, win)
    } else {
        let mut data = Vec::with_capacity((win.x1 - win.x0) * (win.y1 - win.y0) * 3);
        for y in win.y0..win.y1 {
            data.extend_from_slice(&img.data[(y * img.width + win.x0) * 3..(y * img.width + win.x1) * 3]);
        }
        Rgb8 { width: win.x1 - win.x0, height: win.y1 - win.y0, data }
    };
    let lut = Lut::new(&c.common).le_bytes();
    let (ch, cw) = (ch as usize, cw as usize);
    let (py, px) = ((win.y0 as i64 - oy) as usize, (win.x0 as i64 - ox) as usize);
    let mut out = Vec::with_capacity(3 * ch * cw * 4);
    for (chan, table) in lut.iter().enumerate() {
        for y in 0..ch {
            for x in 0..cw {
                let inside = y >= py && y < py + part.height && x >= px && x < px + part.width;
                let v = if inside { part.data[((y - py) * part.width + (x - px)) * 3 + chan] } else { 0 };
                out.extend_from_slice(&table[v as usize]);
            }
        }
    }
    let p = c.patch_size as usize;
    Ok(ClipOut {
        pixel_values: out,
        shape: [3, ch as u32, cw as u32],
        num_tokens: ((ch / p) * (cw / p)) as u32,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crop_offsets_follow_transformers() {
        assert_eq!(crop_offset(448, 336), 56);
        assert_eq!(crop_offset(337, 336), 0);
        assert_eq!(crop_offset(300, 336), -18);
        assert_eq!(crop_offset(301, 336), -18); // ceil(35 / 2)
    }
}
