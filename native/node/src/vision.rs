//! ImageProcessor: the model's image processor (portico-core `vision`) for JS. `process`
//! decodes and preprocesses on the libuv pool (an image is milliseconds of work);
//! `processSync` exists for tests and the bench.

use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use portico_core::vision::{self, DecodeLimits, ImageError};

fn image_err(e: ImageError) -> Error {
    let status = if e.is_client_error() { Status::InvalidArg } else { Status::GenericFailure };
    Error::new(status, format!("{}: {e}", e.code()))
}

/// One preprocessed image. `pixelValues` is little-endian float32 of `shape`.
#[napi(object, use_nullable = true)]
pub struct ProcessedImage {
    pub pixel_values: Buffer,
    pub shape: Vec<u32>,
    /// Qwen-VL's `image_grid_thw` row `[t, h, w]`.
    pub grid_thw: Option<Vec<u32>>,
    /// `[height, width]` of the decoded, oriented image.
    pub image_size: Vec<u32>,
    pub num_tokens: u32,
    /// Hex SHA-256 of the encoded bytes.
    pub hash: String,
}

fn to_js(p: vision::Processed) -> ProcessedImage {
    ProcessedImage {
        // The processor wrote the bytes the engine is sent: handed over, not copied.
        pixel_values: p.pixel_values.into(),
        shape: p.shape,
        grid_thw: p.grid_thw.map(|g| g.to_vec()),
        image_size: p.image_size.to_vec(),
        num_tokens: p.num_tokens,
        hash: p.hash,
    }
}

#[napi]
pub struct ImageProcessor {
    inner: Arc<vision::ImageProcessor>,
}

#[napi]
impl ImageProcessor {
    /// From preprocessor_config.json text. `visionPatchSize`: config.json's
    /// `vision_config.patch_size` (CLIP-tower models count tokens with it).
    /// `maxBytes` / `maxPixels`: per-image limits on the encoded size and decoded pixels.
    #[napi(factory)]
    pub fn from_json(
        config_json: String,
        vision_patch_size: Option<u32>,
        max_bytes: Option<f64>,
        max_pixels: Option<f64>,
    ) -> Result<ImageProcessor> {
        let d = DecodeLimits::default();
        let limits = DecodeLimits {
            max_bytes: max_bytes.map(|b| b as usize).unwrap_or(d.max_bytes),
            max_pixels: max_pixels.map(|p| p as u64).unwrap_or(d.max_pixels),
        };
        let inner = vision::ImageProcessor::from_json(&config_json, vision_patch_size, limits).map_err(image_err)?;
        Ok(ImageProcessor { inner: Arc::new(inner) })
    }

    /// The processor family: "qwen_vl" or "clip".
    #[napi(getter)]
    pub fn family(&self) -> &'static str {
        match self.inner.config() {
            vision::ProcessorConfig::QwenVl(_) => "qwen_vl",
            vision::ProcessorConfig::Clip(_) => "clip",
        }
    }

    /// Decode + preprocess on the libuv thread pool.
    #[napi(ts_return_type = "Promise<ProcessedImage>")]
    pub fn process(&self, bytes: Buffer) -> AsyncTask<ProcessTask> {
        AsyncTask::new(ProcessTask { proc: Arc::clone(&self.inner), bytes: bytes.to_vec() })
    }

    /// Decode + preprocess on the calling thread.
    #[napi]
    pub fn process_sync(&self, bytes: &[u8]) -> Result<ProcessedImage> {
        self.inner.process(bytes).map(to_js).map_err(image_err)
    }
}

pub struct ProcessTask {
    proc: Arc<vision::ImageProcessor>,
    bytes: Vec<u8>,
}

impl Task for ProcessTask {
    type Output = vision::Processed;
    type JsValue = ProcessedImage;

    fn compute(&mut self) -> Result<vision::Processed> {
        self.proc.process(&self.bytes).map_err(image_err)
    }

    fn resolve(&mut self, _env: Env, p: vision::Processed) -> Result<ProcessedImage> {
        Ok(to_js(p))
    }
}
