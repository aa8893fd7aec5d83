//! Rescale and normalize as transformers' numpy path does it: `u8 as f64 * rescale_factor`
//! cast to f32, then `(x - mean) / std` in f32. Every u8 value has one result per
//! channel, so the step is a 256-entry table per channel.

use super::config::Common;

pub struct Lut(pub [[f32; 256]; 3]);

impl Lut {
    pub fn new(c: &Common) -> Lut {
        let mut t = [[0f32; 256]; 3];
        for (ch, row) in t.iter_mut().enumerate() {
            let mean = c.mean[ch] as f32;
            let std = c.std[ch] as f32;
            for (v, slot) in row.iter_mut().enumerate() {
                let mut x = if c.do_rescale { (v as f64 * c.rescale_factor) as f32 } else { v as f32 };
                if c.do_normalize {
                    x = (x - mean) / std;
                }
                *slot = x;
            }
        }
        Lut(t)
    }
}
