//! Multiversioned hot loops: each is one `#[inline(always)]` body, compiled again inside
//! `#[target_feature]` wrappers for AVX2 and AVX-512 and dispatched on a proven-supported
//! [`Level`](crate::isa::Level). The source is the same for every level, so is the result;
//! the test suite forces every supported level against the oracle.

use crate::dtype::{DType, Element};
use crate::index::IndexInt;
use crate::reduce::Combiner;

/// Whether the scatter folds of `T` with combiner `C` are compiled per instruction set: f32
/// and f64, whose combines end in the canonical-NaN select (one blend with AVX, four SSE2
/// mask operations without), and `none` (values moved as their bits), whose staged column
/// tiles measured faster for it (W1 and W6 at 1 thread, in `record/`). Every other fold is
/// the same scalar read-modify-write at every level.
pub(crate) const fn isa_folds<T: Element, C: Combiner<T>>() -> bool {
    matches!(T::DTYPE, DType::F32 | DType::F64) || C::MOVES
}

/// Defines `$name(level, args…)`: the function body given, compiled for the baseline and
/// again for AVX2 and AVX-512, and run at `level`. An `unsafe fn` stays unsafe, with the
/// body's own contract. A leading `if (const { … })` limits the extra versions to the
/// instances the constant holds for (the others run the baseline whatever `level`).
macro_rules! multiversion {
    // Both forms: an `unsafe fn` taking `level`, whose body is compiled for the baseline and
    // inside `#[target_feature]` wrappers for AVX2 and AVX-512.
    (
        @versions ($cond:expr)
        $(#[$m:meta])*
        $vis:vis fn $name:ident<$($g:ident: $b:path),*>($($a:ident: $t:ty),* $(,)?) -> $r:ty
        $body:block
    ) => {
        $(#[$m])*
        #[allow(clippy::too_many_arguments)]
        $vis unsafe fn $name<$($g: $b),*>(level: crate::isa::Level, $($a: $t),*) -> $r {
            #[allow(clippy::too_many_arguments)]
            #[inline(always)]
            unsafe fn body<$($g: $b),*>($($a: $t),*) -> $r $body
            #[cfg(target_arch = "x86_64")]
            {
                #[allow(clippy::too_many_arguments)]
                #[target_feature(enable = "avx2,fma,bmi1,bmi2")]
                unsafe fn v3<$($g: $b),*>($($a: $t),*) -> $r {
                    // SAFETY: the caller's contract, forwarded.
                    unsafe { body::<$($g),*>($($a),*) }
                }
                #[allow(clippy::too_many_arguments)]
                #[target_feature(
                    enable = "avx2,fma,bmi1,bmi2,avx512f,avx512bw,avx512cd,avx512dq,avx512vl"
                )]
                unsafe fn v4<$($g: $b),*>($($a: $t),*) -> $r {
                    // SAFETY: the caller's contract, forwarded.
                    unsafe { body::<$($g),*>($($a),*) }
                }
                // A constant per instance: the versions of an instance it is false for are
                // never compiled.
                if $cond {
                    match level.isa() {
                        // SAFETY: a `Level` is only made for a level this CPU supports
                        // (`isa::active_level` checks it), and these features are that
                        // level's; the rest is the caller's contract, forwarded.
                        crate::isa::Isa::Avx512 => return unsafe { v4::<$($g),*>($($a),*) },
                        // SAFETY: as above.
                        crate::isa::Isa::Avx2 => return unsafe { v3::<$($g),*>($($a),*) },
                        _ => {}
                    }
                }
            }
            #[cfg(not(target_arch = "x86_64"))]
            let _ = level;
            // SAFETY: the caller's contract, forwarded.
            unsafe { body::<$($g),*>($($a),*) }
        }
    };
    (
        @cond ($cond:expr)
        $(#[$m:meta])*
        $vis:vis fn $name:ident<$($g:ident: $b:path),*>($($a:ident: $t:ty),* $(,)?) -> $r:ty
        $body:block
    ) => {
        $(#[$m])*
        #[allow(clippy::too_many_arguments)]
        $vis fn $name<$($g: $b),*>(level: crate::isa::Level, $($a: $t),*) -> $r {
            crate::kernels::simd::multiversion! {
                @versions ($cond)
                #[inline(always)]
                fn versions<$($g: $b),*>($($a: $t),*) -> $r $body
            }
            // SAFETY: the body was given as a safe function's, so it has no contract of
            // its own; `level` is the proof the versions' target features rest on.
            unsafe { versions::<$($g),*>(level, $($a),*) }
        }
    };
    (
        @cond ($cond:expr)
        $(#[$m:meta])*
        $vis:vis unsafe fn $name:ident<$($g:ident: $b:path),*>($($a:ident: $t:ty),* $(,)?) -> $r:ty
        $body:block
    ) => {
        crate::kernels::simd::multiversion! {
            @versions ($cond)
            $(#[$m])*
            ///
            /// # Safety
            /// The body's contract (see above), whatever `level`.
            $vis fn $name<$($g: $b),*>($($a: $t),*) -> $r $body
        }
    };
    (if ($cond:expr) $($rest:tt)*) => {
        crate::kernels::simd::multiversion! { @cond ($cond) $($rest)* }
    };
    ($($rest:tt)*) => {
        crate::kernels::simd::multiversion! { @cond (true) $($rest)* }
    };
}
pub(crate) use multiversion;

multiversion! {
    /// Whether every index of `s` lies in `[lo, hi]` (branch-free, so it vectorises).
    pub(crate) fn all_in_range<I: IndexInt>(s: &[I], lo: i64, hi: i64) -> bool {
        s.iter()
            .fold(true, |acc, x| acc & (lo..=hi).contains(&x.to_i64_sat()))
    }
}
