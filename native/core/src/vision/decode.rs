//! Image bytes → 8-bit RGB, the way `transformers.image_utils.load_image` plus the
//! processor's `convert_to_rgb` see them through Pillow:
//! - the format is sniffed from the bytes (never trusted from a URL or a media type);
//!   JPEG, PNG, WebP and GIF (first frame) are accepted;
//! - the pixel count is checked from the header before any pixel is decoded, so a
//!   decompression bomb is refused without allocating it;
//! - EXIF orientation is applied (`ImageOps.exif_transpose`);
//! - alpha is dropped, as Pillow's `convert("RGB")` (what transformers' `convert_to_rgb`
//!   calls) drops it: a transparent pixel keeps its stored colour;
//! - 16-bit channels keep their high byte, as Pillow's `RGB;16B`/`RGBA;16B`/`LA;16B` modes
//!   do, except 16-bit grayscale, which Pillow opens as `I;16` and converts by clipping to
//!   255 — reproduced because the model is served what Pillow gives.

use std::io::Cursor;

use image::{DynamicImage, ImageDecoder, ImageFormat, ImageReader};

use super::error::ImageError;
use super::resample::Rgb8;

/// Bounds applied while decoding one image.
#[derive(Debug, Clone, Copy)]
pub struct DecodeLimits {
    /// Encoded size, in bytes.
    pub max_bytes: usize,
    /// Decoded width × height.
    pub max_pixels: u64,
}

impl Default for DecodeLimits {
    fn default() -> Self {
        DecodeLimits { max_bytes: 20 << 20, max_pixels: 64 << 20 }
    }
}

/// The format named by the file's magic bytes, if it is one Portico decodes.
pub fn sniff(bytes: &[u8]) -> Option<ImageFormat> {
    match image::guess_format(bytes).ok()? {
        f @ (ImageFormat::Jpeg | ImageFormat::Png | ImageFormat::WebP | ImageFormat::Gif) => Some(f),
        _ => None,
    }
}

/// Decodes `bytes` to RGB as Pillow would hand it to a Hugging Face image processor.
pub fn decode_rgb(bytes: &[u8], limits: &DecodeLimits) -> Result<Rgb8, ImageError> {
    if bytes.len() > limits.max_bytes {
        return Err(ImageError::TooLarge(format!(
            "image is {} bytes; the limit is {}",
            bytes.len(),
            limits.max_bytes
        )));
    }
    let format = sniff(bytes).ok_or_else(|| {
        ImageError::Unsupported("not a JPEG, PNG, WebP or GIF image".to_string())
    })?;
    let mut reader = ImageReader::with_format(Cursor::new(bytes), format);
    let mut lim = image::Limits::default();
    // Decoders allocate about 4 × 2 bytes per pixel at worst (RGBA16), plus slack.
    lim.max_alloc = Some(limits.max_pixels.saturating_mul(8).saturating_add(1 << 20));
    reader.limits(lim);
    let mut decoder = reader.into_decoder().map_err(broken)?;
    let (w, h) = decoder.dimensions();
    if w == 0 || h == 0 {
        return Err(ImageError::Decode("image has no pixels".to_string()));
    }
    let pixels = w as u64 * h as u64;
    if pixels > limits.max_pixels {
        return Err(ImageError::TooLarge(format!(
            "image is {w}x{h} ({pixels} pixels); the limit is {} pixels",
            limits.max_pixels
        )));
    }
    let orientation = decoder.orientation().unwrap_or(image::metadata::Orientation::NoTransforms);
    let mut img = DynamicImage::from_decoder(decoder).map_err(broken)?;
    img.apply_orientation(orientation);
    to_pil_rgb(img)
}

fn broken(e: image::ImageError) -> ImageError {
    match e {
        image::ImageError::Limits(l) => ImageError::TooLarge(format!("image exceeds the decoder's limits ({l})")),
        image::ImageError::Unsupported(u) => ImageError::Unsupported(u.to_string()),
        other => ImageError::Decode(other.to_string()),
    }
}

fn to_pil_rgb(img: DynamicImage) -> Result<Rgb8, ImageError> {
    let (width, height) = (img.width() as usize, img.height() as usize);
    let n = width * height;
    let mut data = Vec::with_capacity(n * 3);
    match img {
        DynamicImage::ImageRgb8(b) => data = b.into_raw(),
        DynamicImage::ImageLuma8(b) => {
            for &l in b.as_raw() {
                data.extend_from_slice(&[l, l, l]);
            }
        }
        DynamicImage::ImageLumaA8(b) => {
            for p in b.as_raw().chunks_exact(2) {
                data.extend_from_slice(&[p[0], p[0], p[0]]);
            }
        }
        DynamicImage::ImageRgba8(b) => {
            for p in b.as_raw().chunks_exact(4) {
                data.extend_from_slice(&p[..3]);
            }
        }
        DynamicImage::ImageLuma16(b) => {
            for &l in b.as_raw() {
                let v = l.min(255) as u8;
                data.extend_from_slice(&[v, v, v]);
            }
        }
        DynamicImage::ImageLumaA16(b) => {
            for p in b.as_raw().chunks_exact(2) {
                let v = (p[0] >> 8) as u8;
                data.extend_from_slice(&[v, v, v]);
            }
        }
        DynamicImage::ImageRgb16(b) => data.extend(b.as_raw().iter().map(|&v| (v >> 8) as u8)),
        DynamicImage::ImageRgba16(b) => {
            for p in b.as_raw().chunks_exact(4) {
                data.extend_from_slice(&[(p[0] >> 8) as u8, (p[1] >> 8) as u8, (p[2] >> 8) as u8]);
            }
        }
        other => {
            return Err(ImageError::Unsupported(format!("pixel layout {:?} is not supported", other.color())));
        }
    }
    Ok(Rgb8 { width, height, data })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(img: DynamicImage) -> Vec<u8> {
        let mut out = Cursor::new(Vec::new());
        img.write_to(&mut out, ImageFormat::Png).unwrap();
        out.into_inner()
    }

    #[test]
    fn rgba_png_drops_alpha() {
        let mut b = image::RgbaImage::new(2, 1);
        b.put_pixel(0, 0, image::Rgba([10, 20, 30, 255]));
        b.put_pixel(1, 0, image::Rgba([10, 20, 30, 0]));
        let rgb = decode_rgb(&png(DynamicImage::ImageRgba8(b)), &DecodeLimits::default()).unwrap();
        assert_eq!(rgb.data, vec![10, 20, 30, 10, 20, 30]);
    }

    #[test]
    fn garbage_is_unsupported_not_a_panic() {
        let e = decode_rgb(b"hello world, not an image", &DecodeLimits::default()).unwrap_err();
        assert!(matches!(e, ImageError::Unsupported(_)), "{e:?}");
    }

    #[test]
    fn truncated_png_is_a_decode_error() {
        let bytes = png(DynamicImage::ImageRgb8(image::RgbImage::new(64, 64)));
        let e = decode_rgb(&bytes[..bytes.len() / 2], &DecodeLimits::default()).unwrap_err();
        assert!(matches!(e, ImageError::Decode(_)), "{e:?}");
    }

    #[test]
    fn pixel_limit_is_checked_before_decoding() {
        let bytes = png(DynamicImage::ImageRgb8(image::RgbImage::new(100, 100)));
        let e = decode_rgb(&bytes, &DecodeLimits { max_bytes: 1 << 20, max_pixels: 9_999 }).unwrap_err();
        assert!(matches!(e, ImageError::TooLarge(ref m) if m.contains("100x100")), "{e:?}");
    }

    #[test]
    fn byte_limit_is_checked_first() {
        let e = decode_rgb(&[0u8; 100], &DecodeLimits { max_bytes: 99, max_pixels: 1 }).unwrap_err();
        assert!(matches!(e, ImageError::TooLarge(_)), "{e:?}");
    }

    #[test]
    fn sixteen_bit_gray_clips_like_pillow() {
        let mut b = image::ImageBuffer::<image::Luma<u16>, Vec<u16>>::new(3, 1);
        b.put_pixel(0, 0, image::Luma([100]));
        b.put_pixel(1, 0, image::Luma([255]));
        b.put_pixel(2, 0, image::Luma([40000]));
        let rgb = decode_rgb(&png(DynamicImage::ImageLuma16(b)), &DecodeLimits::default()).unwrap();
        assert_eq!(rgb.data, vec![100, 100, 100, 255, 255, 255, 255, 255, 255]);
    }
}
