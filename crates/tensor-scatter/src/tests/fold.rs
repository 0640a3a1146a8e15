//! The kernels' branch-free min and max ([`Element::fold_min`], [`Element::fold_max`]) give
//! the bits of the reference semantics ([`Element::reduce_min`], [`Element::reduce_max`]) on
//! every pair of a set of values that holds each kind of float: NaNs of both signs and
//! several payloads, infinities, zeros of both signs, subnormals, extremes and ordinary
//! values.

use crate::Element;

fn specials_f32() -> Vec<f32> {
    let mut v = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        1.5,
        -2.25,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::MAX,
        f32::MIN,
        f32::MIN_POSITIVE,
        -f32::MIN_POSITIVE,
        f32::from_bits(1),
        f32::from_bits(0x8000_0001),
        f32::NAN,
        -f32::NAN,
        f32::from_bits(0x7f80_0001),
        f32::from_bits(0xffc0_1234),
    ];
    let mut x = 0x1234_5678u32;
    for _ in 0..200 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        v.push(f32::from_bits(x));
    }
    v
}

fn check_every_pair<T: Element>(values: &[T]) {
    for &a in values {
        for &b in values {
            let (max, min) = (a.reduce_max(b), a.reduce_min(b));
            assert_eq!(
                a.fold_max(b).to_bits_u64(),
                max.to_bits_u64(),
                "max({a:?}, {b:?})"
            );
            assert_eq!(
                a.fold_min(b).to_bits_u64(),
                min.to_bits_u64(),
                "min({a:?}, {b:?})"
            );
        }
    }
}

#[test]
fn fold_min_and_max_are_the_reference_min_and_max_bit_for_bit() {
    let f32s = specials_f32();
    let f64s: Vec<f64> = f32s
        .iter()
        .map(|&x| f64::from(x))
        .chain(
            f32s.iter()
                .map(|&x| f64::from_bits(u64::from(x.to_bits()) << 32 | 0x9)),
        )
        .collect();
    check_every_pair(&f32s);
    check_every_pair(&f64s);
}
