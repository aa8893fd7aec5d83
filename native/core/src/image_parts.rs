//! The image parts of an OpenAI chat request's messages, read on a worker thread: a `data:`
//! image is megabytes of base64 inside the JSON, and parsing it and decoding it on the event
//! loop cost 3–7 ms per MB there. Each `image_url` part becomes the marker
//! `{"type": "image"}` (where the template places the model's placeholder) and its source is
//! returned: a `data:` URL decoded to bytes, or a remote URL as text. The messages come back
//! as JSON without the images.
//!
//! A part of the wrong shape (no URL, a `detail` other than auto/low/high) fails the whole
//! request, named by its path; a `data:` URL that cannot be decoded is that image's error,
//! reported when the request's images are taken in order.

use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine;
use serde_json::{json, Value};

/// Why a part or an image cannot be used: the client's error.
#[derive(Debug, Clone, PartialEq)]
pub struct PartError {
    pub message: String,
    /// The request path it names (`messages[2].content[1].image_url.url`).
    pub param: String,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ImageSource {
    /// A `data:` URL's bytes.
    Data(Vec<u8>),
    /// An `http(s):` (or other) URL, fetched under the server's policy.
    Url(String),
    /// A `data:` URL that could not be decoded.
    Bad(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct ImagePart {
    /// `messages[i].content[j]`.
    pub path: String,
    pub source: ImageSource,
}

#[derive(Debug)]
pub struct ChatImages {
    /// The messages array as JSON, each image part replaced by the marker.
    pub messages: Vec<u8>,
    pub images: Vec<ImagePart>,
}

fn bad(message: String, param: String) -> PartError {
    PartError { message, param }
}

fn url_of(v: Option<&Value>, at: &str) -> Result<String, PartError> {
    match v {
        Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
        _ => Err(bad(format!("`{at}` must be a non-empty URL string"), at.to_owned())),
    }
}

/// The images of `messages_json` (a JSON array), or None when it holds no `image_url` part
/// (or is not an array of messages: the template path reports that).
pub fn chat_images(messages_json: &[u8], max_bytes: usize) -> Result<Option<ChatImages>, PartError> {
    let Ok(Value::Array(mut list)) = serde_json::from_slice::<Value>(messages_json) else {
        return Ok(None);
    };
    let mut images = Vec::new();
    for (i, m) in list.iter_mut().enumerate() {
        let Some(Value::Array(parts)) = m.get_mut("content") else { continue };
        for (j, p) in parts.iter_mut().enumerate() {
            if p.get("type").and_then(Value::as_str) != Some("image_url") {
                continue;
            }
            let at = format!("messages[{i}].content[{j}]");
            let url = match p.get("image_url") {
                Some(Value::String(_)) => url_of(p.get("image_url"), &format!("{at}.image_url"))?,
                Some(Value::Object(o)) => {
                    let url = url_of(o.get("url"), &format!("{at}.image_url.url"))?;
                    match o.get("detail") {
                        None | Some(Value::Null) => {}
                        Some(Value::String(d)) if matches!(d.as_str(), "auto" | "low" | "high") => {}
                        Some(_) => {
                            let d = format!("{at}.image_url.detail");
                            return Err(bad(format!("`{d}` must be \"auto\", \"low\" or \"high\""), d));
                        }
                    }
                    url
                }
                _ => {
                    let u = format!("{at}.image_url");
                    return Err(bad(format!("`{u}` is required: an object with `url`"), u));
                }
            };
            let source = if url.starts_with("data:") {
                match decode_data_url(&url, max_bytes) {
                    Ok(b) => ImageSource::Data(b),
                    Err(e) => ImageSource::Bad(e),
                }
            } else {
                ImageSource::Url(url)
            };
            images.push(ImagePart { path: at, source });
            *p = json!({"type": "image"});
        }
    }
    if images.is_empty() {
        return Ok(None);
    }
    let messages = serde_json::to_vec(&Value::Array(list)).expect("a Value serializes");
    Ok(Some(ChatImages { messages, images }))
}

/// `data:[type][;base64],payload` → bytes: base64 (standard or URL-safe alphabet, padded or
/// not) only, within `max_bytes`. The error says why, for the client.
pub fn decode_data_url(url: &str, max_bytes: usize) -> Result<Vec<u8>, String> {
    let Some((head, payload)) = url.strip_prefix("data:").and_then(|r| r.split_once(',')) else {
        return Err("malformed data: URL".into());
    };
    if !head.to_ascii_lowercase().ends_with(";base64") {
        return Err("a data: URL image must be base64 (\";base64,\")".into());
    }
    if payload.len() / 4 * 3 > max_bytes + 3 {
        return Err(format!("image is over the {max_bytes}-byte limit"));
    }
    let body = payload.trim_end_matches('=');
    let pad = payload.len() - body.len();
    if pad > 2 || (pad > 0 && payload.len() % 4 != 0) {
        return Err("data: URL payload is not valid base64".into());
    }
    // Lenient where browsers and Python are: either alphabet, the last symbol's unused bits.
    let alphabet = if body.bytes().any(|b| b == b'-' || b == b'_') { &alphabet::URL_SAFE } else { &alphabet::STANDARD };
    let config = GeneralPurposeConfig::new().with_decode_allow_trailing_bits(true).with_decode_padding_mode(DecodePaddingMode::RequireNone);
    let bytes = GeneralPurpose::new(alphabet, config).decode(body).map_err(|_| "data: URL payload is not valid base64".to_owned())?;
    if bytes.len() > max_bytes {
        return Err(format!("image is over the {max_bytes}-byte limit"));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(v: Value) -> Result<Option<ChatImages>, PartError> {
        chat_images(&serde_json::to_vec(&v).unwrap(), 1000)
    }

    #[test]
    fn images_become_markers_in_order_and_the_rest_is_kept() {
        let out = run(json!([
            {"role": "system", "content": "s", "name": "x"},
            {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAEC", "detail": "low"}}]},
            {"role": "user", "content": [{"type": "image_url", "image_url": "https://h/i.png"}]}
        ]))
        .unwrap()
        .unwrap();
        let m: Value = serde_json::from_slice(&out.messages).unwrap();
        assert_eq!(m[0], json!({"role": "system", "content": "s", "name": "x"}));
        assert_eq!(m[1]["content"], json!([{"type": "text", "text": "a"}, {"type": "image"}]));
        assert_eq!(m[2]["content"], json!([{"type": "image"}]));
        assert_eq!(out.images, vec![
            ImagePart { path: "messages[1].content[1]".into(), source: ImageSource::Data(vec![0, 1, 2]) },
            ImagePart { path: "messages[2].content[0]".into(), source: ImageSource::Url("https://h/i.png".into()) },
        ]);
    }

    #[test]
    fn no_images_is_none() {
        assert!(run(json!([{"role": "user", "content": "say \"image_url\""}])).unwrap().is_none());
        assert!(chat_images(b"{not json", 10).unwrap().is_none());
    }

    #[test]
    fn shape_errors_name_the_member() {
        let e = run(json!([{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}])).unwrap_err();
        assert_eq!(e.param, "messages[0].content[0].image_url.url");
        let e = run(json!([{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:x", "detail": "max"}}]}])).unwrap_err();
        assert_eq!(e.param, "messages[0].content[0].image_url.detail");
        let e = run(json!([{"role": "user", "content": [{"type": "image_url"}]}])).unwrap_err();
        assert_eq!(e.param, "messages[0].content[0].image_url");
    }

    #[test]
    fn data_urls() {
        assert_eq!(decode_data_url("data:;base64,AAEC", 10).unwrap(), vec![0, 1, 2]);
        assert_eq!(decode_data_url("data:image/png;base64,AAE=", 10).unwrap(), vec![0, 1]);
        assert_eq!(decode_data_url("data:image/png;BASE64,-_8", 10).unwrap(), vec![251, 255]);
        assert_eq!(decode_data_url("data:;base64,AB", 10).unwrap(), vec![0], "unused bits of the last symbol are ignored");
        for bad in ["data:image/png;base64,AA EC", "data:image/png;base64,AA=EC", "data:image/png;base64,AAE===", "data:image/png;base64,A", "data:image/png;base64,AAE*"] {
            assert!(decode_data_url(bad, 10).unwrap_err().contains("not valid base64"), "{bad}");
        }
        assert!(decode_data_url("data:image/png,abc", 10).unwrap_err().contains("must be base64"));
        assert!(decode_data_url("data:image/png;base64", 10).unwrap_err().contains("malformed"));
        assert!(decode_data_url("data:;base64,AAAAAAAAAAAAAAAA", 5).unwrap_err().contains("over the 5-byte limit"));
    }
}
