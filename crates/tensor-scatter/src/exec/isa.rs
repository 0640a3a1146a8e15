//! Run-time instruction-set dispatch: which compiled version of the hot loops runs.
//!
//! The crate builds for the baseline of its target (SSE2 on x86-64), and compiles a few hot
//! loops (the index range checks and the element gather) a second and third time for AVX2 and
//! AVX-512, choosing at run time from what the CPU reports. Every version is the same source
//! code compiled with different target features, so the results are bit-identical; the test
//! suite forces each path the machine supports and compares it with the reference oracle.
//!
//! [`with_isa`] restricts the calling thread to a lower level (for tests and benchmarks), and
//! the environment variable `TS_ISA` (`baseline`, `avx2` or `avx512`), read once, caps the
//! default for the whole process.

use std::cell::Cell;
use std::sync::OnceLock;

#[cfg(doc)]
use crate::error::ErrorKind;
use crate::error::{Error, Result};

/// An instruction-set level the hot loops are compiled for.
///
/// ```
/// use tensor_scatter::isa::{Isa, with_isa};
/// // Baseline is available everywhere, and forcing it changes no result.
/// assert!(Isa::Baseline.is_supported());
/// let v = with_isa(Isa::Baseline, tensor_scatter::isa::active).unwrap();
/// assert_eq!(v, Isa::Baseline);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Isa {
    /// The target's baseline (SSE2 on x86-64; the only level elsewhere).
    Baseline,
    /// x86-64-v3: AVX2, FMA, BMI1/2.
    Avx2,
    /// x86-64-v4: AVX-512 F, BW, CD, DQ, VL.
    Avx512,
}

impl Isa {
    /// Every level, lowest first.
    pub const ALL: [Isa; 3] = [Isa::Baseline, Isa::Avx2, Isa::Avx512];

    /// Whether this CPU can run the level.
    pub fn is_supported(self) -> bool {
        match self {
            Isa::Baseline => true,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => {
                std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("fma")
                    && std::arch::is_x86_feature_detected!("bmi1")
                    && std::arch::is_x86_feature_detected!("bmi2")
            }
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => {
                Isa::Avx2.is_supported()
                    && std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512bw")
                    && std::arch::is_x86_feature_detected!("avx512cd")
                    && std::arch::is_x86_feature_detected!("avx512dq")
                    && std::arch::is_x86_feature_detected!("avx512vl")
            }
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// The levels this CPU supports, lowest first.
    pub fn supported() -> Vec<Isa> {
        Isa::ALL.into_iter().filter(|i| i.is_supported()).collect()
    }

    /// The name `TS_ISA` and the CLI's `--isa` accept.
    pub fn name(self) -> &'static str {
        match self {
            Isa::Baseline => "baseline",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
        }
    }

    /// The level named `name` (see [`Isa::name`]).
    pub fn from_name(name: &str) -> Option<Isa> {
        Isa::ALL.into_iter().find(|i| i.name() == name)
    }
}

/// The highest supported level, capped by `TS_ISA` when it names one (read once).
fn process_default() -> Isa {
    static DEFAULT: OnceLock<Isa> = OnceLock::new();
    *DEFAULT.get_or_init(|| {
        let best = Isa::supported().into_iter().max().unwrap_or(Isa::Baseline);
        match std::env::var("TS_ISA")
            .ok()
            .as_deref()
            .and_then(Isa::from_name)
        {
            Some(cap) => cap.min(best),
            None => best,
        }
    })
}

thread_local! {
    static FORCED: Cell<Option<Isa>> = const { Cell::new(None) };
}

/// The level the calling thread's operations use now: the one set by an enclosing
/// [`with_isa`], else the best the CPU supports (capped by `TS_ISA`). An operation decides
/// once, on the thread that called it, and its worker threads follow that decision.
pub fn active() -> Isa {
    FORCED.with(Cell::get).unwrap_or_else(process_default)
}

/// Runs `f` with every operation it calls on this thread restricted to `isa`.
///
/// # Errors
/// [`ErrorKind::InvalidArgument`] (argument `isa`) when this CPU cannot run `isa`.
///
/// ```
/// use tensor_scatter::isa::{Isa, with_isa};
/// use tensor_scatter::{gather_elements, GatherOptions, TensorView};
/// let data = [1.0f32, 2.0, 3.0, 4.0];
/// let idx = [1i64, 0, -1, 0];
/// let run = || {
///     gather_elements(
///         &TensorView::new(&data, &[2, 2]).unwrap(),
///         &TensorView::new(&idx, &[2, 2]).unwrap(),
///         &GatherOptions::new().axis(1),
///     )
///     .unwrap()
/// };
/// for isa in Isa::supported() {
///     assert_eq!(with_isa(isa, run).unwrap().as_slice(), &[2.0, 1.0, 4.0, 3.0]);
/// }
/// ```
pub fn with_isa<R>(isa: Isa, f: impl FnOnce() -> R) -> Result<R> {
    if !isa.is_supported() {
        return Err(Error::invalid(
            "with_isa",
            "isa",
            format!("this CPU cannot run the {} instruction set", isa.name()),
        ));
    }
    let previous = FORCED.with(|c| c.replace(Some(isa)));
    // Restores the previous setting even when `f` unwinds.
    struct Restore(Option<Isa>);
    impl Drop for Restore {
        fn drop(&mut self) {
            FORCED.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(previous);
    Ok(f())
}

/// A level this CPU is known to support: only [`active_level`] makes one, so holding it is
/// the proof the multiversioned kernels' `unsafe` calls rest on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Level(Isa);

impl Level {
    /// The level.
    pub(crate) fn isa(self) -> Isa {
        self.0
    }
}

/// [`active`], as a proven-supported [`Level`].
pub(crate) fn active_level() -> Level {
    let isa = active();
    // Both sources of `active` only hold supported levels (`with_isa` checks; the default is
    // the supported maximum); re-checking keeps the proof local and costs a cached lookup.
    Level(if isa.is_supported() {
        isa
    } else {
        Isa::Baseline
    })
}
