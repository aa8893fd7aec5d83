//! Resampling that reproduces Pillow's `Image.resize` on 8-bit RGB images bit for bit.
//!
//! Hugging Face image processors (the PIL backend) resize through Pillow, and a vision
//! model was trained on what Pillow produced, so the same arithmetic is used here:
//! separable convolution, horizontal pass first (into an 8-bit intermediate), then the
//! vertical pass; f64 kernel weights normalised per output pixel, then converted to
//! fixed point with 22 fractional bits; each pass rounds by adding half and clips to 0..255.
//! A pass whose axis keeps its size is skipped, as Pillow skips it.
//!
//! `resize_window` computes only a rectangle of the resized image: each output pixel
//! depends only on its own kernel window, so cropping after resizing (CLIP's center crop)
//! gives the same bytes as resizing only the crop.

/// Pillow's resampling filters (the `resample` integer of preprocessor_config.json).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filter {
    /// `resample: 1`
    Lanczos,
    /// `resample: 2`
    Bilinear,
    /// `resample: 3`
    Bicubic,
    /// `resample: 4`
    Box,
    /// `resample: 5`
    Hamming,
}

impl Filter {
    /// The filter for Pillow's integer code; nearest (0) is not a convolution and is refused.
    pub fn from_pil(code: u64) -> Option<Filter> {
        match code {
            1 => Some(Filter::Lanczos),
            2 => Some(Filter::Bilinear),
            3 => Some(Filter::Bicubic),
            4 => Some(Filter::Box),
            5 => Some(Filter::Hamming),
            _ => None,
        }
    }

    fn support(self) -> f64 {
        match self {
            Filter::Box => 0.5,
            Filter::Bilinear | Filter::Hamming => 1.0,
            Filter::Bicubic => 2.0,
            Filter::Lanczos => 3.0,
        }
    }

    fn weight(self, x: f64) -> f64 {
        match self {
            Filter::Box => {
                if x > -0.5 && x <= 0.5 {
                    1.0
                } else {
                    0.0
                }
            }
            Filter::Bilinear => {
                let x = x.abs();
                if x < 1.0 {
                    1.0 - x
                } else {
                    0.0
                }
            }
            Filter::Hamming => {
                let x = x.abs();
                if x == 0.0 {
                    1.0
                } else if x >= 1.0 {
                    0.0
                } else {
                    let x = x * std::f64::consts::PI;
                    x.sin() / x * (0.54 + 0.46 * x.cos())
                }
            }
            Filter::Bicubic => {
                const A: f64 = -0.5;
                let x = x.abs();
                if x < 1.0 {
                    ((A + 2.0) * x - (A + 3.0)) * x * x + 1.0
                } else if x < 2.0 {
                    (((x - 5.0) * x + 8.0) * x - 4.0) * A
                } else {
                    0.0
                }
            }
            Filter::Lanczos => {
                if (-3.0..3.0).contains(&x) {
                    sinc(x) * sinc(x / 3.0)
                } else {
                    0.0
                }
            }
        }
    }
}

fn sinc(x: f64) -> f64 {
    if x == 0.0 {
        return 1.0;
    }
    let x = x * std::f64::consts::PI;
    x.sin() / x
}

const PRECISION_BITS: u32 = 32 - 8 - 2;

/// Per output index of `first..`: first source index, number of taps, and `ksize`
/// fixed-point weights.
struct Coeffs {
    first: usize,
    ksize: usize,
    bounds: Vec<(usize, usize)>,
    weights: Vec<i32>,
}

impl Coeffs {
    #[inline]
    fn taps(&self, xx: usize) -> (usize, &[i32]) {
        let i = xx - self.first;
        let (xmin, n) = self.bounds[i];
        (xmin, &self.weights[i * self.ksize..i * self.ksize + n])
    }
}

/// Pillow's `precompute_coeffs` for the output indices `range` only.
fn precompute(in_size: usize, out_size: usize, filter: Filter, range: std::ops::Range<usize>) -> Coeffs {
    let scale = in_size as f64 / out_size as f64;
    let filterscale = scale.max(1.0);
    let support = filter.support() * filterscale;
    let ksize = support.ceil() as usize * 2 + 1;
    let first = range.start;
    let mut bounds = Vec::with_capacity(range.len());
    let mut weights = vec![0i32; range.len() * ksize];
    let mut k = vec![0f64; ksize];
    for xx in range {
        let center = (xx as f64 + 0.5) * scale;
        let ss = 1.0 / filterscale;
        // C's (int) cast truncates toward zero; `as i64` does the same.
        let xmin = ((center - support + 0.5) as i64).max(0) as usize;
        let xmax = ((center + support + 0.5) as i64).min(in_size as i64) as usize;
        let taps = xmax.saturating_sub(xmin).min(ksize);
        let mut ww = 0.0;
        for (x, slot) in k.iter_mut().enumerate().take(taps) {
            let w = filter.weight(((x + xmin) as f64 - center + 0.5) * ss);
            *slot = w;
            ww += w;
        }
        let i = xx - first;
        let row = &mut weights[i * ksize..i * ksize + ksize];
        for x in 0..taps {
            let v = if ww != 0.0 { k[x] / ww } else { k[x] };
            let f = v * (1u32 << PRECISION_BITS) as f64;
            row[x] = if v < 0.0 { (f - 0.5) as i32 } else { (f + 0.5) as i32 };
        }
        bounds.push((xmin, taps));
    }
    Coeffs { first, ksize, bounds, weights }
}

#[inline]
fn clip8(v: i32) -> u8 {
    if v >= (1 << PRECISION_BITS << 8) {
        255
    } else if v <= 0 {
        0
    } else {
        (v >> PRECISION_BITS) as u8
    }
}

/// An 8-bit RGB image, rows packed (width * 3 bytes each).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rgb8 {
    pub width: usize,
    pub height: usize,
    pub data: Vec<u8>,
}

/// A rectangle of the resized image: columns `x0..x1`, rows `y0..y1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub x0: usize,
    pub x1: usize,
    pub y0: usize,
    pub y1: usize,
}

/// Pillow's `img.resize((out_w, out_h), filter)` for an RGB image.
pub fn resize(src: &Rgb8, out_w: usize, out_h: usize, filter: Filter) -> Rgb8 {
    resize_window(src, out_w, out_h, filter, Window { x0: 0, x1: out_w, y0: 0, y1: out_h })
}

/// Columns `cols` and rows `rows` of `src`, copied.
fn crop(src: &Rgb8, cols: std::ops::Range<usize>, rows: std::ops::Range<usize>) -> Rgb8 {
    if cols.start == 0 && cols.end == src.width && rows.start == 0 && rows.end == src.height {
        return src.clone();
    }
    let mut data = Vec::with_capacity(cols.len() * rows.len() * 3);
    for y in rows.clone() {
        data.extend_from_slice(&src.data[(y * src.width + cols.start) * 3..(y * src.width + cols.end) * 3]);
    }
    Rgb8 { width: cols.len(), height: rows.len(), data }
}

/// Source indices `lo..hi` that the output indices of `c` read.
fn span(c: &Coeffs) -> (usize, usize) {
    let lo = c.bounds.iter().map(|b| b.0).min().unwrap_or(0);
    let hi = c.bounds.iter().map(|b| b.0 + b.1).max().unwrap_or(lo);
    (lo, hi)
}

/// Horizontal pass over every row of `src`; `src` column 0 is source column `col_off`.
fn horizontal(src: &Rgb8, hc: &Coeffs, col_off: usize) -> Rgb8 {
    let cols = hc.bounds.len();
    let mut out = vec![0u8; src.height * cols * 3];
    for y in 0..src.height {
        let line = &src.data[y * src.width * 3..(y + 1) * src.width * 3];
        let row = &mut out[y * cols * 3..(y + 1) * cols * 3];
        for ox in 0..cols {
            let (xmin, k) = hc.taps(hc.first + ox);
            let px = &line[(xmin - col_off) * 3..(xmin - col_off + k.len()) * 3];
            let mut s0 = 1i32 << (PRECISION_BITS - 1);
            let mut s1 = s0;
            let mut s2 = s0;
            for (x, &w) in k.iter().enumerate() {
                s0 += px[x * 3] as i32 * w;
                s1 += px[x * 3 + 1] as i32 * w;
                s2 += px[x * 3 + 2] as i32 * w;
            }
            row[ox * 3] = clip8(s0);
            row[ox * 3 + 1] = clip8(s1);
            row[ox * 3 + 2] = clip8(s2);
        }
    }
    Rgb8 { width: cols, height: src.height, data: out }
}

/// Vertical pass over every column of `src`; `src` row 0 is source row `row_off`.
fn vertical(src: &Rgb8, vc: &Coeffs, row_off: usize) -> Rgb8 {
    let rows = vc.bounds.len();
    let stride = src.width * 3;
    let mut out = vec![0u8; rows * stride];
    let mut acc = vec![0i32; stride];
    for oy in 0..rows {
        let (ymin, k) = vc.taps(vc.first + oy);
        acc.fill(1i32 << (PRECISION_BITS - 1));
        for (y, &w) in k.iter().enumerate() {
            let r = ymin + y - row_off;
            for (a, &p) in acc.iter_mut().zip(&src.data[r * stride..(r + 1) * stride]) {
                *a += p as i32 * w;
            }
        }
        for (o, &a) in out[oy * stride..(oy + 1) * stride].iter_mut().zip(&acc) {
            *o = clip8(a);
        }
    }
    Rgb8 { width: src.width, height: rows, data: out }
}

/// The `win` rectangle of Pillow's `img.resize((out_w, out_h), filter)`.
///
/// Pass order follows Pillow 13: vertical first when the width grows while the height
/// shrinks, horizontal first otherwise (the 8-bit intermediate makes the order visible).
pub fn resize_window(src: &Rgb8, out_w: usize, out_h: usize, filter: Filter, win: Window) -> Rgb8 {
    let need_h = out_w != src.width;
    let need_v = out_h != src.height;
    let hc = need_h.then(|| precompute(src.width, out_w, filter, win.x0..win.x1));
    let vc = need_v.then(|| precompute(src.height, out_h, filter, win.y0..win.y1));
    match (hc, vc) {
        (None, None) => crop(src, win.x0..win.x1, win.y0..win.y1),
        (Some(hc), None) => horizontal(&crop(src, 0..src.width, win.y0..win.y1), &hc, 0),
        (None, Some(vc)) => {
            let (r0, r1) = span(&vc);
            vertical(&crop(src, win.x0..win.x1, r0..r1), &vc, r0)
        }
        (Some(hc), Some(vc)) => {
            let (r0, r1) = span(&vc);
            let (c0, c1) = span(&hc);
            if out_w > src.width && out_h < src.height {
                let mid = vertical(&crop(src, c0..c1, r0..r1), &vc, r0);
                horizontal(&mid, &hc, c0)
            } else {
                let mid = horizontal(&crop(src, 0..src.width, r0..r1), &hc, 0);
                vertical(&mid, &vc, r0)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gradient(w: usize, h: usize) -> Rgb8 {
        let mut data = Vec::with_capacity(w * h * 3);
        for y in 0..h {
            for x in 0..w {
                data.extend_from_slice(&[(x * 7 % 256) as u8, (y * 13 % 256) as u8, ((x * y) % 256) as u8]);
            }
        }
        Rgb8 { width: w, height: h, data }
    }

    #[test]
    fn same_size_is_a_copy() {
        let img = gradient(17, 9);
        assert_eq!(resize(&img, 17, 9, Filter::Bicubic), img);
    }

    #[test]
    fn constant_image_stays_constant() {
        let img = Rgb8 { width: 31, height: 23, data: vec![200; 31 * 23 * 3] };
        for f in [Filter::Bicubic, Filter::Bilinear, Filter::Lanczos, Filter::Box, Filter::Hamming] {
            let out = resize(&img, 57, 11, f);
            assert!(out.data.iter().all(|&v| v == 200), "{f:?}");
        }
    }

    #[test]
    fn window_equals_crop_of_full_resize() {
        let img = gradient(53, 41);
        // Both passes growing (horizontal first), and width growing while height shrinks
        // (vertical first), and a one-pass resize.
        for (w, h) in [(90, 70), (90, 30), (53, 30)] {
            let full = resize(&img, w, h, Filter::Bicubic);
            let win = Window { x0: 7, x1: w - 3, y0: 5, y1: h - 2 };
            let part = resize_window(&img, w, h, Filter::Bicubic, win);
            let cols = win.x1 - win.x0;
            for y in 0..win.y1 - win.y0 {
                for x in 0..cols {
                    let a = &full.data[((y + win.y0) * w + x + win.x0) * 3..][..3];
                    let b = &part.data[(y * cols + x) * 3..][..3];
                    assert_eq!(a, b, "{w}x{h} at ({x},{y})");
                }
            }
        }
    }

    /// Horizontal-first would give 11 for the first byte.
    const PILLOW_7X3_FIRST3: [u8; 9] = [10, 14, 18, 17, 21, 25, 26, 30, 34];

    #[test]
    fn pass_order_follows_pillow() {
        // Pillow 13, Image.frombytes("RGB", (5, 4), bytes(range(0, 240, 4))):
        //   .resize((7, 3), BICUBIC) runs the vertical pass first (width grows, height shrinks).
        let img = Rgb8 { width: 5, height: 4, data: (0..60).map(|i| (i * 4) as u8).collect() };
        let out = resize(&img, 7, 3, Filter::Bicubic);
        assert_eq!(&out.data[..9], &PILLOW_7X3_FIRST3[..]);
    }

    #[test]
    fn known_pillow_values() {
        // Values printed by Pillow 13 for the same calls.
        let img = Rgb8 { width: 4, height: 1, data: vec![0, 0, 0, 255, 255, 255, 0, 0, 0, 255, 255, 255] };
        assert_eq!(resize(&img, 2, 1, Filter::Bicubic).data, vec![107, 107, 107, 148, 148, 148]);
        // Image.frombytes("RGB", (3, 2), bytes(range(0, 252, 14))).resize((7, 5), BICUBIC)
        let img = Rgb8 { width: 3, height: 2, data: (0..18).map(|i| (i * 14) as u8).collect() };
        let out = resize(&img, 7, 5, Filter::Bicubic);
        let first_row: Vec<u8> = vec![0, 0, 12, 0, 6, 20, 9, 23, 37, 30, 44, 58, 51, 65, 79, 68, 82, 96, 76, 90, 104];
        let last_row: Vec<u8> = vec![134, 148, 162, 142, 156, 170, 159, 173, 187, 180, 194, 208, 201, 215, 229, 218, 232, 246, 226, 240, 254];
        assert_eq!(&out.data[..21], &first_row[..]);
        assert_eq!(&out.data[4 * 21..], &last_row[..]);
    }
}
