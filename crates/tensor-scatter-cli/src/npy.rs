//! NumPy `.npy` files (format versions 1, 2 and 3), read into and written from [`DynTensor`].
//!
//! Little- and big-endian arrays of every tensor-scatter dtype are read, in C or Fortran order
//! (`np.save` of a transposed array writes the latter). bfloat16 arrays as `ml_dtypes` writes them (`<V2`, raw 2-byte records) are read as bf16
//! when `bf16` is set, and bf16 tensors are written back as `<V2`.

use std::io::Write;
use std::path::Path;

use tensor_scatter::half::{bf16, f16};
use tensor_scatter::{Buffer, DType, DynTensor};

const MAGIC: &[u8] = b"\x93NUMPY";

/// Parses the `.npy` bytes in `bytes`. `bf16` selects how `<V2` records are read.
pub(crate) fn parse(bytes: &[u8], bf16_records: bool) -> Result<DynTensor, String> {
    if bytes.len() < 10 || &bytes[..6] != MAGIC {
        return Err("not a .npy file (bad magic)".into());
    }
    let major = bytes[6];
    let (header_len, start): (usize, usize) = match major {
        1 => (usize::from(u16::from_le_bytes([bytes[8], bytes[9]])), 10),
        2 | 3 => {
            let b = bytes.get(8..12).ok_or("truncated header")?;
            (u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize, 12)
        }
        v => return Err(format!("unsupported .npy format version {v}")),
    };
    let header = bytes
        .get(start..start.saturating_add(header_len))
        .ok_or("truncated header")?;
    let header = std::str::from_utf8(header).map_err(|_| "header is not text")?;
    let descr = dict_value(header, "descr").ok_or("header has no 'descr'")?;
    let descr = descr.trim_matches(|c| c == '\'' || c == '"');
    let fortran = match dict_value(header, "fortran_order").map(str::trim) {
        Some("False") => false,
        Some("True") => true,
        Some(v) => return Err(format!("'fortran_order' is {v}, not True or False")),
        None => return Err("header has no 'fortran_order'".into()),
    };
    let shape = parse_shape(dict_value(header, "shape").ok_or("header has no 'shape'")?)?;
    let (dtype, big_endian) = parse_descr(descr, bf16_records)?;
    let count = shape
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .ok_or("shape overflows")?;
    let width = dtype.size_of();
    let body = &bytes[start + header_len..];
    let need = count.checked_mul(width).ok_or("shape overflows")?;
    if body.len() != need {
        return Err(format!(
            "shape {shape:?} of {dtype} needs {need} data bytes, the file has {}",
            body.len()
        ));
    }
    let c_order;
    let body = if fortran && shape.len() > 1 {
        c_order = fortran_to_c(body, &shape, width);
        &c_order[..]
    } else {
        body
    };
    let buffer = decode(dtype, body, big_endian)?;
    DynTensor::new(buffer, &shape).map_err(|e| e.to_string())
}

/// The text after `'key':` up to the next top-level comma.
fn dict_value<'a>(header: &'a str, key: &str) -> Option<&'a str> {
    let pat_single = format!("'{key}':");
    let pat_double = format!("\"{key}\":");
    let at = header
        .find(&pat_single)
        .map(|i| i + pat_single.len())
        .or_else(|| header.find(&pat_double).map(|i| i + pat_double.len()))?;
    let rest = header[at..].trim_start();
    let end = if rest.starts_with('(') {
        rest.find(')')? + 1
    } else {
        rest.find([',', '}'])?
    };
    Some(rest[..end].trim())
}

fn parse_shape(text: &str) -> Result<Vec<usize>, String> {
    let inner = text
        .trim()
        .strip_prefix('(')
        .and_then(|t| t.strip_suffix(')'))
        .ok_or("bad 'shape'")?;
    inner
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.trim_end_matches('L')
                .parse::<usize>()
                .map_err(|_| format!("bad dimension '{s}' in 'shape'"))
        })
        .collect()
}

fn parse_descr(descr: &str, bf16_records: bool) -> Result<(DType, bool), String> {
    let (order, code) = descr.split_at(descr.len().min(1));
    let big = match order {
        "<" | "|" | "=" => false,
        ">" => true,
        _ => return Err(format!("unsupported dtype '{descr}'")),
    };
    let dtype = match code {
        "f8" => DType::F64,
        "f4" => DType::F32,
        "f2" => DType::F16,
        "i8" => DType::I64,
        "i4" => DType::I32,
        "i2" => DType::I16,
        "i1" => DType::I8,
        "u8" => DType::U64,
        "u4" => DType::U32,
        "u2" => DType::U16,
        "u1" => DType::U8,
        "b1" => DType::Bool,
        "V2" if bf16_records => DType::BF16,
        "V2" => return Err("2-byte void records ('<V2', ml_dtypes bfloat16) need --bf16".into()),
        _ => return Err(format!("unsupported dtype '{descr}'")),
    };
    Ok((dtype, big))
}

/// The elements of the column-major `body` (of `shape`, `width` bytes each) in row-major order.
fn fortran_to_c(body: &[u8], shape: &[usize], width: usize) -> Vec<u8> {
    // Column-major strides, in elements.
    let strides: Vec<usize> = shape
        .iter()
        .scan(1usize, |s, &n| {
            let here = *s;
            *s *= n;
            Some(here)
        })
        .collect();
    let mut out = Vec::with_capacity(body.len());
    let mut coord = vec![0usize; shape.len()];
    let mut at = 0usize;
    for _ in 0..body.len() / width.max(1) {
        out.extend_from_slice(&body[at * width..(at + 1) * width]);
        // The next row-major coordinate, and its column-major position.
        for d in (0..shape.len()).rev() {
            coord[d] += 1;
            at += strides[d];
            if coord[d] < shape[d] {
                break;
            }
            at -= strides[d] * shape[d];
            coord[d] = 0;
        }
    }
    out
}

/// Decodes `body` (element width already checked) into a typed buffer.
fn decode(dtype: DType, body: &[u8], big: bool) -> Result<Buffer, String> {
    macro_rules! ints {
        ($t:ty, $variant:ident) => {{
            let n = std::mem::size_of::<$t>();
            let mut v = tensor_scatter::vec_with_huge_pages(body.len() / n);
            v.extend(body.chunks_exact(n).map(|c| {
                let mut b = [0u8; std::mem::size_of::<$t>()];
                b.copy_from_slice(c);
                if big {
                    <$t>::from_be_bytes(b)
                } else {
                    <$t>::from_le_bytes(b)
                }
            }));
            Buffer::$variant(v)
        }};
    }
    Ok(match dtype {
        DType::F64 => ints!(f64, F64),
        DType::F32 => ints!(f32, F32),
        DType::I64 => ints!(i64, I64),
        DType::I32 => ints!(i32, I32),
        DType::I16 => ints!(i16, I16),
        DType::I8 => ints!(i8, I8),
        DType::U64 => ints!(u64, U64),
        DType::U32 => ints!(u32, U32),
        DType::U16 => ints!(u16, U16),
        DType::U8 => ints!(u8, U8),
        DType::F16 => match ints!(u16, U16) {
            Buffer::U16(v) => Buffer::F16(v.into_iter().map(f16::from_bits).collect()),
            _ => unreachable!("ints! builds the variant it is given"),
        },
        DType::BF16 => match ints!(u16, U16) {
            Buffer::U16(v) => Buffer::BF16(v.into_iter().map(bf16::from_bits).collect()),
            _ => unreachable!("ints! builds the variant it is given"),
        },
        DType::Bool => Buffer::Bool(
            body.iter()
                .map(|&b| match b {
                    0 => Ok(false),
                    1 => Ok(true),
                    v => Err(format!("bool array holds the byte {v}, not 0 or 1")),
                })
                .collect::<Result<_, _>>()?,
        ),
    })
}

/// The `.npy` (version 1.0) bytes of `t`.
pub(crate) fn encode(t: &DynTensor) -> Vec<u8> {
    let descr = match t.dtype() {
        DType::F64 => "<f8",
        DType::F32 => "<f4",
        DType::F16 => "<f2",
        DType::BF16 => "<V2",
        DType::I64 => "<i8",
        DType::I32 => "<i4",
        DType::I16 => "<i2",
        DType::I8 => "|i1",
        DType::U64 => "<u8",
        DType::U32 => "<u4",
        DType::U16 => "<u2",
        DType::U8 => "|u1",
        DType::Bool => "|b1",
    };
    let dims: Vec<String> = t.shape().iter().map(usize::to_string).collect();
    let shape = match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    // Pad so that the data starts on a 64-byte boundary, header ending in '\n'.
    let total = 10 + header.len() + 1;
    header.push_str(&" ".repeat((64 - total % 64) % 64));
    header.push('\n');
    let mut out = Vec::with_capacity(10 + header.len() + t.buffer().len() * t.dtype().size_of());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    macro_rules! put {
        ($v:expr) => {
            for x in $v {
                out.extend_from_slice(&x.to_le_bytes());
            }
        };
    }
    match t.buffer() {
        Buffer::F64(v) => put!(v),
        Buffer::F32(v) => put!(v),
        Buffer::F16(v) => put!(v.iter().map(|x| x.to_bits())),
        Buffer::BF16(v) => put!(v.iter().map(|x| x.to_bits())),
        Buffer::I64(v) => put!(v),
        Buffer::I32(v) => put!(v),
        Buffer::I16(v) => put!(v),
        Buffer::I8(v) => put!(v),
        Buffer::U64(v) => put!(v),
        Buffer::U32(v) => put!(v),
        Buffer::U16(v) => put!(v),
        Buffer::U8(v) => put!(v),
        Buffer::Bool(v) => put!(v.iter().map(|&b| u8::from(b))),
    }
    out
}

/// Reads a `.npy` file.
pub(crate) fn read(path: &Path, bf16_records: bool) -> Result<DynTensor, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    parse(&bytes, bf16_records).map_err(|e| format!("{}: {e}", path.display()))
}

/// Writes `t` to `path` atomically: a temporary file in the same directory, then a rename, so
/// `path` is either untouched or complete.
pub(crate) fn write_atomic(path: &Path, t: &DynTensor) -> Result<(), String> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .ok_or("the output path names no file")?
        .to_string_lossy();
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = std::fs::File::create(&tmp)
        .and_then(|mut f| f.write_all(&encode(t)).and_then(|()| f.sync_all()))
        .and_then(|()| std::fs::rename(&tmp, path));
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("cannot write {}: {e}", path.display())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `bytes` with the first occurrence of `from` replaced by `to` (same length).
    fn swap(mut bytes: Vec<u8>, from: &[u8], to: &[u8]) -> Vec<u8> {
        let at = bytes
            .windows(from.len())
            .position(|w| w == from)
            .expect("pattern present");
        bytes[at..at + to.len()].copy_from_slice(to);
        bytes
    }

    #[test]
    fn every_dtype_round_trips() {
        let tensors = [
            DynTensor::from_vec(vec![1.5f64, -2.0], &[2]).unwrap(),
            DynTensor::from_vec(vec![f16::from_f32(0.5); 6], &[2, 3]).unwrap(),
            DynTensor::from_vec(vec![bf16::from_f32(-3.0)], &[]).unwrap(),
            DynTensor::from_vec(vec![i8::MIN, i8::MAX], &[2, 1]).unwrap(),
            DynTensor::from_vec(vec![u64::MAX], &[1]).unwrap(),
            DynTensor::from_vec(vec![true, false, true], &[3]).unwrap(),
            DynTensor::from_vec(Vec::<i32>::new(), &[0, 4]).unwrap(),
        ];
        for t in tensors {
            let bytes = encode(&t);
            assert_eq!(
                (10 + u16::from_le_bytes([bytes[8], bytes[9]]) as usize) % 64,
                0
            );
            assert_eq!(parse(&bytes, true).unwrap(), t);
        }
    }

    #[test]
    fn bf16_records_need_the_flag() {
        let t = DynTensor::from_vec(vec![bf16::ONE], &[1]).unwrap();
        assert!(parse(&encode(&t), false).unwrap_err().contains("--bf16"));
    }

    #[test]
    fn malformed_files_are_errors_not_panics() {
        let good = encode(&DynTensor::from_vec(vec![1u16, 2, 3], &[3]).unwrap());
        for cut in 0..good.len() {
            assert!(
                parse(&good[..cut], false).is_err(),
                "prefix of {cut} bytes accepted"
            );
        }
        let bad_bool = swap(
            encode(&DynTensor::from_vec(vec![2u8], &[1]).unwrap()),
            b"|u1",
            b"|b1",
        );
        assert!(parse(&bad_bool, false).unwrap_err().contains("byte 2"));
    }

    #[test]
    fn fortran_order_arrays_are_read_in_row_major_order() {
        // [[0, 1, 2], [3, 4, 5]] stored column by column, and a 3-D array.
        let bytes = swap(
            encode(&DynTensor::from_vec(vec![0i32, 3, 1, 4, 2, 5], &[2, 3]).unwrap()),
            b"'fortran_order': False",
            b"'fortran_order': True, ",
        );
        assert_eq!(
            parse(&bytes, false).unwrap(),
            DynTensor::from_vec(vec![0i32, 1, 2, 3, 4, 5], &[2, 3]).unwrap()
        );
        // Shape [2, 2, 2]: element (i, j, k) at column-major position i + 2j + 4k.
        let col: Vec<u8> = (0..8u8)
            .map(|p| (p & 1) * 4 + (p >> 1 & 1) * 2 + (p >> 2))
            .collect();
        let bytes = swap(
            encode(&DynTensor::from_vec(col, &[2, 2, 2]).unwrap()),
            b"'fortran_order': False",
            b"'fortran_order': True, ",
        );
        assert_eq!(
            parse(&bytes, false).unwrap(),
            DynTensor::from_vec((0..8u8).collect(), &[2, 2, 2]).unwrap()
        );
        let odd = swap(
            encode(&DynTensor::from_vec(vec![1u8], &[1]).unwrap()),
            b"'fortran_order': False",
            b"'fortran_order': 0,    ",
        );
        assert!(parse(&odd, false).unwrap_err().contains("fortran_order"));
    }

    #[test]
    fn big_endian_arrays_are_read() {
        let bytes = swap(
            encode(&DynTensor::from_vec(vec![0x0102i16], &[1]).unwrap()),
            b"<i2",
            b">i2",
        );
        assert_eq!(
            parse(&bytes, false).unwrap().as_slice::<i16>(),
            Some(&[0x0201i16][..])
        );
    }
}
