//! Request JSON turned into template values: a direct walk of `serde_json::Value` (several
//! times faster than `minijinja::Value::from_serialize`, which goes through serde's
//! serializer machinery), and maps that remember their default `tojson` text so a tools
//! list sent again on the next turn is not serialised again.

use std::sync::{Arc, OnceLock};

use minijinja::value::{Enumerator, Object, ObjectExt, ObjectRepr, Value};
use serde_json::Value as Json;

/// The template value of a JSON value; the same value `Value::from_serialize` gives
/// (u64 for non-negative integers, i64 for negative ones, f64 otherwise; maps in order).
pub fn json_to_value(json: Json) -> Value {
    match json {
        Json::Null => Value::from(()),
        Json::Bool(b) => Value::from(b),
        Json::Number(n) => number(&n),
        Json::String(s) => Value::from(s.as_str()),
        Json::Array(items) => Value::from_object(
            items.into_iter().map(json_to_value).collect::<Vec<Value>>(),
        ),
        Json::Object(map) => map
            .into_iter()
            .map(|(k, v)| (Value::from(k.as_str()), json_to_value(v)))
            .collect(),
    }
}

fn number(n: &serde_json::Number) -> Value {
    if let Some(u) = n.as_u64() {
        Value::from(u)
    } else if let Some(i) = n.as_i64() {
        Value::from(i)
    } else {
        Value::from(n.as_f64().unwrap_or(f64::NAN))
    }
}

/// A JSON array of objects whose items keep their default `tojson` output once computed
/// (see `JsonMap`); other items are plain values.
pub fn json_to_cached_list(json: Json) -> Value {
    let Json::Array(items) = json else {
        return json_to_value(json);
    };
    Value::from_object(
        items
            .into_iter()
            .map(|item| match item {
                Json::Object(_) => Value::from_object(JsonMap {
                    inner: json_to_value(item),
                    default_json: OnceLock::new(),
                }),
                other => json_to_value(other),
            })
            .collect::<Vec<Value>>(),
    )
}

/// A map that behaves as its inner map in templates and carries its
/// `json.dumps(x, ensure_ascii=False)` text, computed on first use.
#[derive(Debug)]
pub struct JsonMap {
    inner: Value,
    default_json: OnceLock<String>,
}

impl JsonMap {
    pub fn inner(&self) -> &Value {
        &self.inner
    }

    /// The default-options JSON text, computed by `make` the first time.
    pub fn default_json(&self, make: impl FnOnce(&Value) -> String) -> &str {
        self.default_json.get_or_init(|| make(&self.inner))
    }
}

impl Object for JsonMap {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Map
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        self.inner.get_item(key).ok().filter(|v| !v.is_undefined())
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        self.mapped_enumerator(|this| match this.inner.try_iter() {
            Ok(keys) => Box::new(keys),
            Err(_) => Box::new(std::iter::empty()),
        })
    }

    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        self.inner.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn same_values_as_from_serialize() {
        let j = json!({"z": [1, -2, 2.5, 1e300, null, true, "é"], "a": {"b": {}}, "e": []});
        let fast = json_to_value(j.clone());
        let slow = Value::from_serialize(&j);
        assert_eq!(fast, slow);
        assert_eq!(format!("{fast:?}"), format!("{slow:?}"));
    }

    #[test]
    fn cached_list_items_behave_as_maps() {
        let j = json!([{"type": "function", "function": {"name": "f"}}, 3]);
        let v = json_to_cached_list(j.clone());
        assert_eq!(v, Value::from_serialize(&j));
        let first = v.get_item(&Value::from(0)).unwrap();
        assert_eq!(first.len(), Some(2));
        let keys: Vec<Value> = first.try_iter().unwrap().collect();
        assert_eq!(keys, vec![Value::from("type"), Value::from("function")]);
    }
}
