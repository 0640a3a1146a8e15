//! The hot loops. They run only after the plan and the index pass have proven every position
//! in bounds, so they cannot fail.
//!
//! Reads of `indices` and `updates` go through safe slices (bounds-checked once per row).
//! Writes to the destination go through [`DestPtr`], a raw pointer that lets parallel tasks
//! write disjoint cells of one buffer (column tiles of a matrix are not contiguous, so they
//! cannot be split as `&mut` slices). This module and its submodules are the only places with
//! `unsafe`; every block says why it is sound. With the `checked-kernels` feature every
//! `DestPtr` access is bounds-checked (a panic, not undefined behaviour, if an argument were
//! ever wrong), so the whole test suite can run over checked access.

pub(crate) mod gather;
pub(crate) mod rows;
pub(crate) mod scatter;
pub(crate) mod segment;
pub(crate) mod simd;

pub(crate) use rows::{Rows, build_rows};

use std::marker::PhantomData;

use crate::dtype::{BitsOf, Element};
use crate::reduce::Combiner;
use crate::view::elems::ElemsMut;
use crate::view::{TensorView, TensorViewMut};

/// Checks, at compile time, that `T` and `U` have one size and one alignment.
const fn same_layout<T, U>() {
    assert!(std::mem::size_of::<T>() == std::mem::size_of::<U>());
    assert!(std::mem::align_of::<T>() == std::mem::align_of::<U>());
}

/// `s` with its elements read as their bits ([`BitsOf`]).
pub(crate) fn bits_of<T: Element>(s: &[T]) -> &[BitsOf<T>] {
    const { same_layout::<T, BitsOf<T>>() };
    // SAFETY: `BitsOf<T>` has `T`'s size and alignment (checked above); every element type is
    // a primitive with every byte initialised, and every bit pattern is a valid unsigned
    // integer.
    unsafe { std::slice::from_raw_parts(s.as_ptr().cast(), s.len()) }
}

/// `v` with its elements read as their bits ([`BitsOf`]).
pub(crate) fn bits_view<'a, T: Element>(v: &TensorView<'a, T>) -> TensorView<'a, BitsOf<T>> {
    const { same_layout::<T, BitsOf<T>>() };
    TensorView {
        // SAFETY: `BitsOf<T>` has `T`'s size and alignment (checked above), and every bit
        // pattern is a valid unsigned integer.
        data: unsafe { v.data.cast() },
        layout: v.layout.clone(),
    }
}

/// `v` with its elements written as their bits ([`BitsOf`]).
///
/// # Safety
/// Every value written through the result is the bits of a `T` (read from a `T`).
pub(crate) unsafe fn bits_view_mut<'a, T: Element>(
    v: &'a mut TensorViewMut<'_, T>,
) -> TensorViewMut<'a, BitsOf<T>> {
    const { same_layout::<T, BitsOf<T>>() };
    let layout = v.layout.clone();
    TensorViewMut {
        // SAFETY: as in `bits_view`; the exclusive borrow of `v` is held for the result's
        // life, and what it writes are valid `T`s by the contract.
        data: unsafe { v.data.cast() },
        layout,
    }
}

/// The `T`s whose bits `v` holds.
///
/// # Safety
/// Every element of `v` is the bits of a `T`.
pub(crate) unsafe fn vec_from_bits<T: Element>(v: Vec<BitsOf<T>>) -> Vec<T> {
    const { same_layout::<T, BitsOf<T>>() };
    let mut v = std::mem::ManuallyDrop::new(v);
    // SAFETY: one size and alignment (checked above), so the allocation's layout is the one a
    // `Vec<T>` of this capacity has; the elements are valid `T`s by the contract.
    unsafe { Vec::from_raw_parts(v.as_mut_ptr().cast(), v.len(), v.capacity()) }
}

/// `s[i]`, unchecked unless the `checked-kernels` feature is on.
///
/// # Safety
/// `i < s.len()`.
#[inline(always)]
pub(crate) unsafe fn read<U: Copy>(s: &[U], i: usize) -> U {
    if cfg!(feature = "checked-kernels") {
        s[i]
    } else {
        debug_assert!(i < s.len());
        // SAFETY: `i < s.len()` per the contract.
        unsafe { *s.get_unchecked(i) }
    }
}

/// `&mut s[i]`, unchecked unless the `checked-kernels` feature is on.
///
/// # Safety
/// `i < s.len()`.
#[inline(always)]
pub(crate) unsafe fn at_mut<U>(s: &mut [U], i: usize) -> &mut U {
    if cfg!(feature = "checked-kernels") {
        &mut s[i]
    } else {
        debug_assert!(i < s.len());
        // SAFETY: `i < s.len()` per the contract.
        unsafe { s.get_unchecked_mut(i) }
    }
}

/// `dest[d + i] = C(dest[d + i], upd[u + i])` for `i < len`.
#[inline(always)]
pub(crate) fn combine<T: Element, C: Combiner<T>>(
    dest: &mut [T],
    d: usize,
    upd: &[T],
    u: usize,
    len: usize,
) {
    combine_slices::<T, C>(&mut dest[d..d + len], &upd[u..u + len]);
}

/// `dst[i] = C(dst[i], src[i])` over the shorter of the two.
#[inline(always)]
pub(crate) fn combine_slices<T: Element, C: Combiner<T>>(dst: &mut [T], src: &[T]) {
    for (x, &y) in dst.iter_mut().zip(src) {
        *x = C::combine(*x, y);
    }
}

/// `dest[d + i] = value` for `i < len`.
#[inline(always)]
pub(crate) fn fill<T: Copy>(dest: &mut [T], d: usize, len: usize, value: T) {
    dest[d..d + len].fill(value);
}

impl<T: Copy> ElemsMut<'_, T> {
    /// The buffer as a kernel destination. The kernels write only positions the view's layout
    /// reaches (the plan and the index pass prove it), never a gap.
    pub(crate) fn dest(&mut self) -> DestPtr<'_, T> {
        let len = self.len();
        // SAFETY: the positions are this borrow's for as long as the result lives (`&mut
        // self`); what a kernel may touch through it is the kernels' contract.
        unsafe { DestPtr::from_raw(self.ptr(), len) }
    }
}

/// A destination buffer shared by the tasks of one kernel, each writing only cells it owns.
///
/// The buffer may be partly uninitialised (the allocating forms write the copy of `data`
/// through it); a cell is read only after it was written or when it was initialised to begin
/// with, which the callers guarantee.
#[derive(Debug)]
pub(crate) struct DestPtr<'a, T> {
    ptr: *mut T,
    len: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

impl<T> Clone for DestPtr<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for DestPtr<'_, T> {}

// SAFETY: a DestPtr is only a capability to write cells of a buffer that outlives it ('a);
// the kernels give every task disjoint cells, so sharing it between threads introduces no
// data race. T: Send is required to move values into the buffer from other threads.
unsafe impl<T: Send> Send for DestPtr<'_, T> {}
// SAFETY: as above; tasks holding `&DestPtr` write disjoint cells.
unsafe impl<T: Send> Sync for DestPtr<'_, T> {}

impl<'a, T: Copy> DestPtr<'a, T> {
    /// Over an initialised slice.
    #[cfg(test)]
    pub(crate) fn new(slice: &'a mut [T]) -> Self {
        DestPtr {
            ptr: slice.as_mut_ptr(),
            len: slice.len(),
            _borrow: PhantomData,
        }
    }

    /// Over `len` cells from `ptr`.
    ///
    /// # Safety
    /// The cells lie in one allocation and are this borrow's for 'a; which of them a kernel
    /// may read or write is the kernel's contract.
    pub(crate) unsafe fn from_raw(ptr: *mut T, len: usize) -> Self {
        DestPtr {
            ptr,
            len,
            _borrow: PhantomData,
        }
    }

    /// Cells `[i, i + n)` alone, renumbered from 0.
    pub(crate) fn sub(self, i: usize, n: usize) -> Self {
        assert!(i <= self.len && n <= self.len - i);
        DestPtr {
            ptr: self.ptr.wrapping_add(i),
            len: n,
            _borrow: PhantomData,
        }
    }

    /// Over the first `n` cells of `v`'s capacity (`v` must be empty with capacity `n`).
    pub(crate) fn spare(v: &'a mut Vec<T>, n: usize) -> Self {
        debug_assert!(v.is_empty() && v.capacity() >= n);
        DestPtr {
            ptr: v.as_mut_ptr(),
            len: n,
            _borrow: PhantomData,
        }
    }

    #[inline(always)]
    fn check(self, i: usize, n: usize) {
        if cfg!(feature = "checked-kernels") {
            assert!(
                i <= self.len && n <= self.len - i,
                "kernel access [{i}, {i}+{n}) outside {}",
                self.len
            );
        } else {
            debug_assert!(i <= self.len && n <= self.len - i);
        }
    }

    /// The same buffer, as cells of `U` (the byte-width kernels move every dtype as the
    /// unsigned integer of its size).
    ///
    /// # Safety
    /// `size_of::<U>() == size_of::<T>()` and `align_of::<U>() <= align_of::<T>()`, and the
    /// caller writes only bit patterns that are valid values of `T` (bits read from `T`s).
    pub(crate) unsafe fn cast<U>(self) -> DestPtr<'a, U> {
        assert!(std::mem::size_of::<U>() == std::mem::size_of::<T>());
        assert!(std::mem::align_of::<U>() <= std::mem::align_of::<T>());
        DestPtr {
            ptr: self.ptr.cast::<U>(),
            len: self.len,
            _borrow: PhantomData,
        }
    }

    /// The address of cell `i`, for prefetch hints and alignment decisions only (never
    /// dereferenced; `wrapping_add` keeps it defined whatever `i`).
    pub(crate) fn addr_at(self, i: usize) -> *const T {
        self.ptr.wrapping_add(i)
    }

    /// Reads cell `i`.
    ///
    /// # Safety
    /// `i < len`, the cell is initialised, and no other task writes it concurrently.
    #[inline(always)]
    pub(crate) unsafe fn get(self, i: usize) -> T {
        self.check(i, 1);
        // SAFETY: in bounds and initialised per the contract; no concurrent writer.
        unsafe { self.ptr.add(i).read() }
    }

    /// Writes cell `i`.
    ///
    /// # Safety
    /// `i < len` and no other task reads or writes it concurrently.
    #[inline(always)]
    pub(crate) unsafe fn set(self, i: usize, v: T) {
        self.check(i, 1);
        // SAFETY: in bounds per the contract; this task owns the cell.
        unsafe { self.ptr.add(i).write(v) }
    }

    /// `C(dest[i], v)` into cell `i`.
    ///
    /// # Safety
    /// As [`get`](Self::get) and [`set`](Self::set).
    #[inline(always)]
    pub(crate) unsafe fn combine<C: Combiner<T>>(self, i: usize, v: T)
    where
        T: Element,
    {
        // SAFETY: forwarded contract.
        unsafe { self.set(i, C::combine(self.get(i), v)) }
    }

    /// Copies `src` into cells `[i, i + src.len())`, which may be uninitialised.
    ///
    /// # Safety
    /// The range is in bounds and owned by the calling task; `src` does not overlap it.
    #[inline(always)]
    pub(crate) unsafe fn copy_in(self, i: usize, src: &[T]) {
        self.check(i, src.len());
        // SAFETY: destination range in bounds and exclusively ours; `src` is a distinct
        // borrow (shared vs. the exclusive one this DestPtr was made from), so no overlap.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), self.ptr.add(i), src.len()) }
    }

    /// Copies `src` into cells `[i, i + src.len())` like [`copy_in`](Self::copy_in), but
    /// writes every whole, aligned 64-byte line of the range with non-temporal stores (they
    /// bypass the cache and skip the read-for-ownership of the line; the partial lines at
    /// either end are stored normally). The calling task must run [`stream_fence`] before it
    /// ends, so that its stores are ordered before the task's completion is published.
    ///
    /// # Safety
    /// As [`copy_in`](Self::copy_in).
    #[inline(always)]
    pub(crate) unsafe fn stream_in(self, level: crate::isa::Level, i: usize, src: &[T]) {
        self.check(i, src.len());
        let bytes = std::mem::size_of_val(src);
        // SAFETY: `i + src.len()` is in bounds (checked above / the contract).
        let dst = unsafe { self.ptr.add(i) }.cast::<u8>();
        let head = dst.align_offset(64).min(bytes);
        let lines = (bytes - head) / 64;
        let tail = head + lines * 64;
        let from = src.as_ptr().cast::<u8>();
        // SAFETY: the three pieces `[0, head)`, `[head, tail)` and `[tail, bytes)` partition
        // the byte range of `src` and of the destination cells, which are in bounds, owned by
        // this task and disjoint from `src` (contract). Any bit pattern copied from a `T` is
        // a valid `T`, byte by byte, since whole cells are copied.
        unsafe {
            std::ptr::copy_nonoverlapping(from, dst, head);
            stream_lines(level, dst.add(head), from.add(head), lines);
            std::ptr::copy_nonoverlapping(from.add(tail), dst.add(tail), bytes - tail);
        }
    }

    /// The initialised cells `[i, i + n)` as a slice.
    ///
    /// # Safety
    /// The range is in bounds, initialised, and no other task touches it while the slice lives.
    #[inline(always)]
    pub(crate) unsafe fn slice_mut<'s>(self, i: usize, n: usize) -> &'s mut [T]
    where
        'a: 's,
    {
        self.check(i, n);
        // SAFETY: per the contract: in bounds, initialised, exclusively borrowed for 's.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(i), n) }
    }
}

/// Copies `lines` 64-byte lines from `src` to the 64-byte-aligned `dst` with non-temporal
/// stores (two 32-byte AVX stores per line where AVX2 is active, else four SSE2 stores); a
/// plain copy off x86-64.
///
/// # Safety
/// `dst` is 64-byte aligned, both ranges are valid for `64 * lines` bytes and do not overlap.
#[inline(always)]
unsafe fn stream_lines(level: crate::isa::Level, dst: *mut u8, src: *const u8, lines: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        #[target_feature(enable = "avx2")]
        unsafe fn v3(dst: *mut u8, src: *const u8, lines: usize) {
            for at in (0..64 * lines).step_by(32) {
                // SAFETY: the 32 bytes at `at` lie in both valid ranges (caller), and
                // `dst + at` is 32-aligned (`dst` is 64-aligned).
                unsafe {
                    let v = _mm256_loadu_si256(src.add(at).cast());
                    _mm256_stream_si256(dst.add(at).cast(), v);
                }
            }
        }
        if level.isa() != crate::isa::Isa::Baseline {
            // SAFETY: a `Level` above the baseline is only made on a CPU with AVX2; the
            // ranges are the caller's.
            return unsafe { v3(dst, src, lines) };
        }
        for at in (0..64 * lines).step_by(16) {
            // SAFETY: SSE2 is part of the x86-64 baseline; the 16 bytes at `at` lie in both
            // valid ranges and `dst + at` is 16-aligned (`dst` is 64-aligned).
            unsafe {
                let v = _mm_loadu_si128(src.add(at).cast());
                _mm_stream_si128(dst.add(at).cast(), v);
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = level;
        // SAFETY: the caller's ranges, valid and disjoint.
        unsafe { std::ptr::copy_nonoverlapping(src, dst, 64 * lines) };
    }
}

/// Orders this thread's earlier non-temporal stores ([`DestPtr::stream_in`]) before its later
/// stores, so a task that ends with it publishes finished cells; a no-op off x86-64.
#[inline(always)]
pub(crate) fn stream_fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE is part of the x86-64 baseline; a fence has no other effect.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
}

/// Hints the cache to load the `bytes` (at most four lines) at `p`; a no-op elsewhere.
#[inline(always)]
pub(crate) fn prefetch<U>(p: *const U, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        for line in (0..bytes.min(256)).step_by(64) {
            // SAFETY: SSE is part of the x86_64 baseline, and a prefetch never faults and has
            // no effect on program state whatever the address (`wrapping_add` keeps the
            // pointer arithmetic itself defined).
            unsafe { _mm_prefetch::<_MM_HINT_T0>(p.cast::<i8>().wrapping_add(line)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (p, bytes);
}

/// Hints the cache to load the four lines (256 bytes) at `p`, with no branch between them;
/// a no-op elsewhere.
#[inline(always)]
pub(crate) fn prefetch4<U>(p: *const U) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let p = p.cast::<i8>();
        // SAFETY: as in `prefetch`: a prefetch never faults, whatever the address.
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(p);
            _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(64));
            _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(128));
            _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(192));
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// A vector of `n` cells, initialised by `f` through a [`DestPtr`] (no zero-fill pass, and the
/// first touch of every page happens in the kernel's own tasks). When `f` fails, nothing is
/// kept. When the memory cannot be allocated, `oom(bytes)` is returned instead of aborting
/// the process (small inputs can ask for enormous outputs, e.g. a gather of one long row
/// by many indices).
///
/// # Safety
/// When `f` returns `Ok`, it must have written every one of the `n` cells.
pub(crate) unsafe fn build_vec<T: Copy, E>(
    n: usize,
    oom: impl FnOnce(usize) -> E,
    f: impl FnOnce(DestPtr<'_, T>) -> Result<(), E>,
) -> Result<Vec<T>, E> {
    let Some(mut v) = try_vec_with_huge_pages(n) else {
        return Err(oom(n.saturating_mul(std::mem::size_of::<T>())));
    };
    f(DestPtr::spare(&mut v, n))?;
    // SAFETY: capacity is at least n, and the caller guarantees every cell was written.
    unsafe { v.set_len(n) };
    Ok(v)
}

/// `n` copies of `v` in fresh memory, written by up to `ctx.threads` threads: the first touch
/// of a large fresh buffer (its page faults and the kernel's clearing of each page) is most of
/// what filling it costs, and that is cut across the threads too.
pub(crate) fn par_filled<T: Copy + Send + Sync, E>(
    ctx: crate::exec::Ctx,
    n: usize,
    v: T,
    oom: impl FnOnce(usize) -> E,
) -> Result<Vec<T>, E> {
    let bytes = n.saturating_mul(std::mem::size_of::<T>());
    let tasks = ctx.tasks(bytes, 1);
    let fill = |d: DestPtr<'_, T>| {
        ctx.run(tasks, |t| {
            let (lo, hi) = crate::shape::part(n, tasks, t, 1);
            for i in lo..hi {
                // SAFETY: `i < n`, and task `t` alone owns `lo..hi`.
                unsafe { d.set(i, v) };
            }
        });
        Ok(())
    };
    // SAFETY: the tasks cover `0..n` (`part` cuts it into `tasks` disjoint ranges), so every
    // cell is written.
    unsafe { build_vec(n, oom, fill) }
}

/// Allocations from this many bytes are advised to use transparent huge pages.
const HUGE_PAGE_MIN_BYTES: usize = 4 << 20;

/// An empty vector with capacity for `n` elements whose memory, when it is at least 4 MiB,
/// the kernel is asked to back with transparent huge pages (`madvise(MADV_HUGEPAGE)` on Linux,
/// as NumPy does for its large arrays; a hint without effect elsewhere or when THP is off).
///
/// The allocating operators build their outputs in such memory: a fresh 64 MB output then
/// needs 32 page faults instead of 16,384. It is public so that callers can give their inputs
/// the same treatment (the CLI does).
///
/// ```
/// let mut v: Vec<f32> = tensor_scatter::vec_with_huge_pages(1 << 22);
/// assert!(v.is_empty() && v.capacity() >= 1 << 22);
/// v.resize(1 << 22, 1.0);
/// assert_eq!(v[12345], 1.0);
/// ```
pub fn vec_with_huge_pages<T>(n: usize) -> Vec<T> {
    let v = Vec::with_capacity(n);
    advise_huge_pages(v.as_ptr(), n);
    v
}

/// [`vec_with_huge_pages`], or `None` when the memory cannot be allocated (instead of
/// aborting the process, as `Vec::with_capacity` does).
///
/// ```
/// assert!(tensor_scatter::try_vec_with_huge_pages::<f64>(usize::MAX / 4).is_none());
/// let v = tensor_scatter::try_vec_with_huge_pages::<f32>(16).unwrap();
/// assert!(v.is_empty() && v.capacity() >= 16);
/// ```
pub fn try_vec_with_huge_pages<T>(n: usize) -> Option<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).ok()?;
    advise_huge_pages(v.as_ptr(), n);
    Some(v)
}

#[cfg_attr(not(target_os = "linux"), allow(unused_variables))]
fn advise_huge_pages<T>(start: *const T, n: usize) {
    #[cfg(target_os = "linux")]
    {
        let bytes = n.saturating_mul(std::mem::size_of::<T>());
        if bytes >= HUGE_PAGE_MIN_BYTES {
            let start = start as usize;
            let first = start.next_multiple_of(4096);
            let end = start.saturating_add(bytes) & !4095;
            if end > first {
                // SAFETY: the range lies inside this vector's own allocation (page-aligned
                // inward), and MADV_HUGEPAGE changes neither contents nor validity of memory:
                // it only tells the kernel how to back the pages on first touch. A failure
                // (THP disabled) is harmless and ignored.
                unsafe {
                    libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE)
                };
            }
        }
    }
}
