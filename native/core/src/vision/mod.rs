//! Image input: decode the bytes a client sent and run the model's image processor,
//! reproducing transformers' processors (see docs/images.md for the tolerance).
//!
//! `ImageProcessor::process` is the whole per-image job: decode (sniffed format,
//! orientation, RGB as Pillow gives it), the family's resize/normalize/patchify, the
//! token count the model will expand the placeholder to, and a content hash.

pub mod clip;
pub mod config;
pub mod decode;
pub mod error;
pub mod normalize;
pub mod qwen_vl;
pub mod resample;

use sha2::{Digest, Sha256};

pub use config::ProcessorConfig;
pub use decode::DecodeLimits;
pub use error::ImageError;
pub use resample::Rgb8;

/// One preprocessed image, ready for the engine.
#[derive(Debug, Clone, PartialEq)]
pub struct Processed {
    /// Row-major float32 pixels of `shape`, as their little-endian bytes (what the engine
    /// is sent: no conversion pass, no copy on the way to JS).
    pub pixel_values: Vec<u8>,
    /// Qwen-VL: `[patches, C*T*P*P]`; CLIP: `[3, H, W]`.
    pub shape: Vec<u32>,
    /// Qwen-VL's `image_grid_thw` row.
    pub grid_thw: Option<[u32; 3]>,
    /// `(height, width)` of the decoded, oriented image (LLaVA-style `image_sizes`).
    pub image_size: [u32; 2],
    /// Placeholder tokens this image expands to in the prompt.
    pub num_tokens: u32,
    /// Hex SHA-256 of the encoded bytes: the same file hashes the same wherever it came from.
    pub hash: String,
}

#[derive(Debug, Clone)]
pub struct ImageProcessor {
    config: ProcessorConfig,
    limits: DecodeLimits,
}

pub fn content_hash(bytes: &[u8]) -> String {
    let d = Sha256::digest(bytes);
    let mut s = String::with_capacity(64);
    for b in d {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

impl ImageProcessor {
    pub fn new(config: ProcessorConfig, limits: DecodeLimits) -> ImageProcessor {
        ImageProcessor { config, limits }
    }

    /// From preprocessor_config.json text (and config.json's vision patch size, if known).
    pub fn from_json(text: &str, vision_patch_size: Option<u32>, limits: DecodeLimits) -> Result<ImageProcessor, ImageError> {
        Ok(ImageProcessor::new(ProcessorConfig::from_json(text, vision_patch_size)?, limits))
    }

    pub fn config(&self) -> &ProcessorConfig {
        &self.config
    }

    /// Decode and preprocess one encoded image.
    pub fn process(&self, bytes: &[u8]) -> Result<Processed, ImageError> {
        let rgb = decode::decode_rgb(bytes, &self.limits)?;
        let mut p = self.process_rgb(&rgb)?;
        p.hash = content_hash(bytes);
        Ok(p)
    }

    /// Preprocess decoded RGB pixels (hash left empty).
    pub fn process_rgb(&self, rgb: &Rgb8) -> Result<Processed, ImageError> {
        let image_size = [rgb.height as u32, rgb.width as u32];
        Ok(match &self.config {
            ProcessorConfig::QwenVl(c) => {
                let o = qwen_vl::process(c, rgb)?;
                Processed {
                    pixel_values: o.pixel_values,
                    shape: o.shape.to_vec(),
                    grid_thw: Some(o.grid_thw),
                    image_size,
                    num_tokens: o.num_tokens,
                    hash: String::new(),
                }
            }
            ProcessorConfig::Clip(c) => {
                let o = clip::process(c, rgb)?;
                Processed {
                    pixel_values: o.pixel_values,
                    shape: o.shape.to_vec(),
                    grid_thw: None,
                    image_size,
                    num_tokens: o.num_tokens,
                    hash: String::new(),
                }
            }
        })
    }
}
