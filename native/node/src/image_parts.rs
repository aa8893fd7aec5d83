//! The image parts of a chat request's messages (portico-core `image_parts`), read on the
//! libuv pool: a `data:` image is megabytes of JSON and base64 the event loop should not
//! parse.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use portico_core::image_parts::{self, ImageSource};

#[napi(object, use_nullable = true)]
pub struct ChatImagePart {
    /// `messages[i].content[j]`.
    pub path: String,
    /// A `data:` URL's bytes.
    pub data: Option<Buffer>,
    /// A remote URL.
    pub url: Option<String>,
    /// Why a `data:` URL cannot be decoded (the client's error).
    pub error: Option<String>,
}

#[napi(object, use_nullable = true)]
pub struct ChatImagesResult {
    /// The messages array as JSON, each image part replaced by `{"type": "image"}`.
    pub messages: Option<Buffer>,
    pub images: Vec<ChatImagePart>,
    /// A part of the wrong shape: the request's error, and the path it names.
    pub error: Option<String>,
    pub param: Option<String>,
}

pub struct ChatImagesTask {
    messages: Vec<u8>,
    max_bytes: usize,
}

impl Task for ChatImagesTask {
    type Output = Option<ChatImagesResult>;
    type JsValue = Option<ChatImagesResult>;

    fn compute(&mut self) -> Result<Self::Output> {
        Ok(match image_parts::chat_images(&self.messages, self.max_bytes) {
            Ok(None) => None,
            Err(e) => Some(ChatImagesResult { messages: None, images: Vec::new(), error: Some(e.message), param: Some(e.param) }),
            Ok(Some(found)) => Some(ChatImagesResult {
                messages: Some(found.messages.into()),
                images: found
                    .images
                    .into_iter()
                    .map(|p| {
                        let (data, url, error) = match p.source {
                            ImageSource::Data(b) => (Some(b.into()), None, None),
                            ImageSource::Url(u) => (None, Some(u), None),
                            ImageSource::Bad(e) => (None, None, Some(e)),
                        };
                        ChatImagePart { path: p.path, data, url, error }
                    })
                    .collect(),
                error: None,
                param: None,
            }),
        })
    }

    fn resolve(&mut self, _env: Env, out: Self::Output) -> Result<Self::JsValue> {
        Ok(out)
    }
}

/// The images of `body[msgStart, msgEnd)` (a chat request's messages array), on the libuv
/// pool; null when it holds none. `data:` URLs are decoded there (at most `maxBytes` each).
#[napi(ts_return_type = "Promise<ChatImagesResult | null>")]
pub fn chat_images(body: &[u8], msg_start: i64, msg_end: i64, max_bytes: f64) -> Result<AsyncTask<ChatImagesTask>> {
    let (s, e) = (msg_start as usize, msg_end as usize);
    if msg_start < 0 || s > e || e > body.len() {
        return Err(Error::new(Status::InvalidArg, "messages span outside the body".to_owned()));
    }
    Ok(AsyncTask::new(ChatImagesTask { messages: body[s..e].to_vec(), max_bytes: max_bytes as usize }))
}
