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

    /// The same values as the little-endian bytes of each f32: processors write their
    /// output as the bytes the engine is sent, with no conversion pass after.
    pub fn le_bytes(&self) -> [[[u8; 4]; 256]; 3] {
        let mut b = [[[0u8; 4]; 256]; 3];
        for (ch, row) in self.0.iter().enumerate() {
            for (v, x) in row.iter().enumerate() {
                b[ch][v] = x.to_le_bytes();
            }
        }
        b
    }
}
