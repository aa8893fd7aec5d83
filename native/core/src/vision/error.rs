//! What can go wrong with one image. Every variant but `Config` is the client's fault
//! (an HTTP 400 naming the content part); `Config` means the model folder's
//! preprocessor_config.json is unusable.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImageError {
    /// The bytes claim a supported format but do not decode.
    Decode(String),
    /// Not an image format Portico decodes (or a pixel layout it does not handle).
    Unsupported(String),
    /// Over a size, pixel or decoder-memory limit.
    TooLarge(String),
    /// Decodes, but the processor cannot take its shape (aspect ratio over 200, …).
    Shape(String),
    /// The model's preprocessor_config.json cannot drive a processor.
    Config(String),
}

impl ImageError {
    pub fn is_client_error(&self) -> bool {
        !matches!(self, ImageError::Config(_))
    }

    /// Stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            ImageError::Decode(_) => "ERR_IMAGE_DECODE",
            ImageError::Unsupported(_) => "ERR_IMAGE_UNSUPPORTED",
            ImageError::TooLarge(_) => "ERR_IMAGE_TOO_LARGE",
            ImageError::Shape(_) => "ERR_IMAGE_SHAPE",
            ImageError::Config(_) => "ERR_IMAGE_CONFIG",
        }
    }
}

impl fmt::Display for ImageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ImageError::Decode(m) => write!(f, "image could not be decoded: {m}"),
            ImageError::Unsupported(m) => write!(f, "unsupported image: {m}"),
            ImageError::TooLarge(m) => write!(f, "image too large: {m}"),
            ImageError::Shape(m) => write!(f, "image shape not accepted: {m}"),
            ImageError::Config(m) => write!(f, "preprocessor_config.json: {m}"),
        }
    }
}

impl std::error::Error for ImageError {}
