//! preprocessor_config.json → the processor that reproduces it. Field names and defaults
//! are those of transformers' `Qwen2VLImageProcessor` (Qwen2-VL, Qwen2.5-VL, Qwen3-VL) and
//! `CLIPImageProcessor` (LLaVA-1.5 and the other CLIP-tower LLaVA models).

use serde_json::Value;

use super::error::ImageError;
use super::resample::Filter;

pub const OPENAI_CLIP_MEAN: [f64; 3] = [0.48145466, 0.4578275, 0.40821073];
pub const OPENAI_CLIP_STD: [f64; 3] = [0.26862954, 0.26130258, 0.27577711];

/// Steps shared by every family: resample filter, rescale, normalize.
#[derive(Debug, Clone, PartialEq)]
pub struct Common {
    pub do_resize: bool,
    pub resample: Filter,
    pub do_rescale: bool,
    pub rescale_factor: f64,
    pub do_normalize: bool,
    pub mean: [f64; 3],
    pub std: [f64; 3],
}

#[derive(Debug, Clone, PartialEq)]
pub struct QwenVlConfig {
    pub common: Common,
    pub min_pixels: u64,
    pub max_pixels: u64,
    pub patch_size: u32,
    pub temporal_patch_size: u32,
    pub merge_size: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ClipResize {
    ShortestEdge(u32),
    Exact { height: u32, width: u32 },
}

#[derive(Debug, Clone, PartialEq)]
pub struct ClipConfig {
    pub common: Common,
    pub size: ClipResize,
    /// `(height, width)` when `do_center_crop`.
    pub crop: Option<(u32, u32)>,
    /// The vision tower's patch size (config.json's `vision_config.patch_size`), for the token count.
    pub patch_size: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ProcessorConfig {
    QwenVl(QwenVlConfig),
    Clip(ClipConfig),
}

fn bad(m: impl Into<String>) -> ImageError {
    ImageError::Config(m.into())
}

fn get_bool(v: &Value, key: &str, default: bool) -> Result<bool, ImageError> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(bad(format!("`{key}` must be a boolean"))),
    }
}

fn get_u64(v: &Value, key: &str) -> Result<Option<u64>, ImageError> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(x) => x
            .as_u64()
            .filter(|&n| n > 0)
            .map(Some)
            .ok_or_else(|| bad(format!("`{key}` must be a positive integer"))),
    }
}

fn get_f64(v: &Value, key: &str, default: f64) -> Result<f64, ImageError> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(x) => x.as_f64().ok_or_else(|| bad(format!("`{key}` must be a number"))),
    }
}

fn get_triple(v: &Value, key: &str, default: [f64; 3]) -> Result<[f64; 3], ImageError> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Number(n)) => {
            let x = n.as_f64().unwrap_or(0.0);
            Ok([x, x, x])
        }
        Some(Value::Array(a)) if a.len() == 3 && a.iter().all(Value::is_number) => {
            Ok([a[0].as_f64().unwrap(), a[1].as_f64().unwrap(), a[2].as_f64().unwrap()])
        }
        Some(_) => Err(bad(format!("`{key}` must be a number or three numbers"))),
    }
}

fn common(v: &Value, default_mean: [f64; 3], default_std: [f64; 3]) -> Result<Common, ImageError> {
    let code = get_u64(v, "resample").or_else(|_| {
        // resample 0 (nearest) is a valid Pillow code but not a convolution we reproduce.
        if v.get("resample").and_then(Value::as_u64) == Some(0) {
            Ok(Some(0))
        } else {
            Err(bad("`resample` must be a Pillow resampling code"))
        }
    })?;
    let resample = match code {
        None => Filter::Bicubic,
        Some(c) => Filter::from_pil(c).ok_or_else(|| bad(format!("resample {c} is not supported (1-5 are)")))?,
    };
    if !get_bool(v, "do_convert_rgb", true)? {
        return Err(bad("do_convert_rgb false is not supported"));
    }
    let std = get_triple(v, "image_std", default_std)?;
    if std.iter().any(|&s| s == 0.0) {
        return Err(bad("`image_std` must not contain 0"));
    }
    Ok(Common {
        do_resize: get_bool(v, "do_resize", true)?,
        resample,
        do_rescale: get_bool(v, "do_rescale", true)?,
        rescale_factor: get_f64(v, "rescale_factor", 1.0 / 255.0)?,
        do_normalize: get_bool(v, "do_normalize", true)?,
        mean: get_triple(v, "image_mean", default_mean)?,
        std,
    })
}

fn qwen(v: &Value) -> Result<QwenVlConfig, ImageError> {
    let size = v.get("size").cloned().unwrap_or(Value::Null);
    let min_pixels = get_u64(v, "min_pixels")?
        .or(get_u64(&size, "shortest_edge")?)
        .or(get_u64(&size, "min_pixels")?)
        .unwrap_or(56 * 56);
    let max_pixels = get_u64(v, "max_pixels")?
        .or(get_u64(&size, "longest_edge")?)
        .or(get_u64(&size, "max_pixels")?)
        .unwrap_or(28 * 28 * 1280);
    if min_pixels > max_pixels {
        return Err(bad("min_pixels is larger than max_pixels"));
    }
    let c = QwenVlConfig {
        common: common(v, OPENAI_CLIP_MEAN, OPENAI_CLIP_STD)?,
        min_pixels,
        max_pixels,
        patch_size: get_u64(v, "patch_size")?.unwrap_or(14) as u32,
        temporal_patch_size: get_u64(v, "temporal_patch_size")?.unwrap_or(2) as u32,
        merge_size: get_u64(v, "merge_size")?.unwrap_or(2) as u32,
    };
    if c.patch_size > 64 || c.merge_size > 8 || c.temporal_patch_size > 8 {
        return Err(bad("patch_size / merge_size / temporal_patch_size out of range"));
    }
    Ok(c)
}

fn hw(v: &Value, key: &str) -> Result<Option<(u32, u32)>, ImageError> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => {
            let s = n.as_u64().filter(|&s| s > 0 && s <= 8192).ok_or_else(|| bad(format!("`{key}` out of range")))?;
            Ok(Some((s as u32, s as u32)))
        }
        Some(o) => match (get_u64(o, "height")?, get_u64(o, "width")?) {
            (Some(h), Some(w)) if h <= 8192 && w <= 8192 => Ok(Some((h as u32, w as u32))),
            _ => Ok(None),
        },
    }
}

fn clip(v: &Value, patch_size: Option<u32>) -> Result<ClipConfig, ImageError> {
    if get_bool(v, "do_pad", false)? {
        return Err(bad("do_pad (pad to square) is not supported"));
    }
    let size_v = v.get("size").cloned().unwrap_or(Value::Null);
    let size = if let Some(s) = size_v.as_u64() {
        ClipResize::ShortestEdge(s as u32)
    } else if let Some(s) = get_u64(&size_v, "shortest_edge")? {
        ClipResize::ShortestEdge(s.min(8192) as u32)
    } else if let Some((height, width)) = hw(v, "size")? {
        ClipResize::Exact { height, width }
    } else if size_v.is_null() {
        ClipResize::ShortestEdge(224)
    } else {
        return Err(bad("`size` must have shortest_edge or height and width"));
    };
    let crop = if get_bool(v, "do_center_crop", true)? {
        Some(hw(v, "crop_size")?.unwrap_or((224, 224)))
    } else {
        None
    };
    let patch_size = patch_size.or(get_u64(v, "patch_size")?.map(|p| p as u32)).unwrap_or(14);
    Ok(ClipConfig { common: common(v, OPENAI_CLIP_MEAN, OPENAI_CLIP_STD)?, size, crop, patch_size })
}

impl ProcessorConfig {
    /// Parses preprocessor_config.json. `vision_patch_size` is config.json's
    /// `vision_config.patch_size` when known (CLIP-tower models take their token count from it).
    pub fn from_json(text: &str, vision_patch_size: Option<u32>) -> Result<ProcessorConfig, ImageError> {
        let v: Value = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
        let kind = v
            .get("image_processor_type")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("no image_processor_type"))?;
        let kind = kind.strip_suffix("Fast").unwrap_or(kind);
        let kind = kind.strip_suffix("Pil").unwrap_or(kind);
        match kind {
            "Qwen2VLImageProcessor" => Ok(ProcessorConfig::QwenVl(qwen(&v)?)),
            "CLIPImageProcessor" | "LlavaImageProcessor" => Ok(ProcessorConfig::Clip(clip(&v, vision_patch_size)?)),
            other => Err(bad(format!("image processor {other} is not supported"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qwen25_published_values() {
        let c = ProcessorConfig::from_json(
            r#"{"min_pixels":3136,"max_pixels":12845056,"patch_size":14,"temporal_patch_size":2,"merge_size":2,
               "image_mean":[0.48145466,0.4578275,0.40821073],"image_std":[0.26862954,0.26130258,0.27577711],
               "image_processor_type":"Qwen2VLImageProcessor"}"#,
            None,
        )
        .unwrap();
        let ProcessorConfig::QwenVl(q) = c else { panic!() };
        assert_eq!((q.min_pixels, q.max_pixels, q.patch_size), (3136, 12845056, 14));
        assert_eq!(q.common.resample, Filter::Bicubic);
    }

    #[test]
    fn qwen3_size_dict() {
        let c = ProcessorConfig::from_json(
            r#"{"size":{"longest_edge":16777216,"shortest_edge":65536},"patch_size":16,
               "image_mean":[0.5,0.5,0.5],"image_std":[0.5,0.5,0.5],"image_processor_type":"Qwen2VLImageProcessorFast"}"#,
            None,
        )
        .unwrap();
        let ProcessorConfig::QwenVl(q) = c else { panic!() };
        assert_eq!((q.min_pixels, q.max_pixels, q.patch_size), (65536, 16777216, 16));
        assert_eq!(q.common.mean, [0.5; 3]);
    }

    #[test]
    fn llava15_values() {
        let c = ProcessorConfig::from_json(
            r#"{"crop_size":{"height":336,"width":336},"size":{"shortest_edge":336},"resample":3,
               "image_processor_type":"CLIPImageProcessor"}"#,
            None,
        )
        .unwrap();
        let ProcessorConfig::Clip(c) = c else { panic!() };
        assert_eq!(c.size, ClipResize::ShortestEdge(336));
        assert_eq!(c.crop, Some((336, 336)));
    }

    #[test]
    fn refusals_name_the_field() {
        for (json, needle) in [
            (r#"{}"#, "image_processor_type"),
            (r#"{"image_processor_type":"SiglipImageProcessor"}"#, "Siglip"),
            (r#"{"image_processor_type":"CLIPImageProcessor","resample":0}"#, "resample 0"),
            (r#"{"image_processor_type":"CLIPImageProcessor","image_std":[0,1,1]}"#, "image_std"),
            (r#"{"image_processor_type":"Qwen2VLImageProcessor","min_pixels":10,"max_pixels":5}"#, "min_pixels"),
            (r#"not json"#, "expected"),
        ] {
            let e = ProcessorConfig::from_json(json, None).unwrap_err();
            assert!(e.to_string().contains(needle), "{json}: {e}");
            assert!(!e.is_client_error());
        }
    }
}
