//! Agents send the same `tools` array on every turn: the parsed template value (with each
//! tool's `tojson` text, once computed) is kept per model, keyed by the array's raw bytes,
//! in a small most-recently-used list.

use std::sync::Mutex;

use minijinja::value::Value;

use crate::error::Result;
use crate::messages::parse_array;
use crate::template_value::json_to_cached_list;

const CAPACITY: usize = 8;

/// Tools arrays larger than this are parsed every time (not worth keeping).
const MAX_BYTES: usize = 256 * 1024;

#[derive(Default)]
pub struct ToolsCache {
    /// Most recently used last.
    entries: Mutex<Vec<(Box<[u8]>, Value)>>,
}

impl ToolsCache {
    /// The template value of a `tools` span: `None` when absent or JSON null; an error for
    /// anything but an array (errors are not cached).
    pub fn get(&self, bytes: Option<&[u8]>) -> Result<Option<Value>> {
        let Some(bytes) = bytes else { return Ok(None) };
        if let Some(v) = self.lookup(bytes) {
            return Ok(Some(v));
        }
        let Some(json) = parse_array(Some(bytes), "tools")? else {
            return Ok(None);
        };
        let value = json_to_cached_list(json);
        if bytes.len() <= MAX_BYTES {
            let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
            if entries.len() == CAPACITY {
                entries.remove(0);
            }
            entries.push((bytes.into(), value.clone()));
        }
        Ok(Some(value))
    }

    fn lookup(&self, bytes: &[u8]) -> Option<Value> {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let at = entries.iter().rposition(|(k, _)| &k[..] == bytes)?;
        let entry = entries.remove(at);
        let value = entry.1.clone();
        entries.push(entry);
        Some(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_bytes_same_value_and_errors_are_not_kept() {
        let cache = ToolsCache::default();
        let a = br#"[{"type":"function","function":{"name":"f"}}]"#;
        let v1 = cache.get(Some(a)).unwrap().unwrap();
        let v2 = cache.get(Some(a)).unwrap().unwrap();
        assert_eq!(v1, v2);
        assert!(cache.get(Some(b"null")).unwrap().is_none());
        assert!(cache.get(None).unwrap().is_none());
        assert!(cache.get(Some(b"{}")).is_err());
        assert!(cache.get(Some(b"{}")).is_err());
        for i in 0..20 {
            let s = format!(r#"[{{"n":{i}}}]"#);
            let v = cache.get(Some(s.as_bytes())).unwrap().unwrap();
            assert_eq!(v.get_item(&Value::from(0)).unwrap().get_attr("n").unwrap(), Value::from(i));
        }
        assert!(cache.entries.lock().unwrap().len() <= CAPACITY);
    }
}
