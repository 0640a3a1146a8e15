//! However many threads a call asks for, it starts no more than the process has cores. (Alone
//! in its test binary: it counts the process's threads.)

#[cfg(target_os = "linux")]
#[test]
fn asking_for_a_thousand_threads_starts_at_most_the_cores() {
    use tensor_scatter::{Par, Reduction, ScatterOptions, TensorView, scatter_elements};
    let threads = || std::fs::read_dir("/proc/self/task").unwrap().count();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let n = 1 << 21;
    let data = vec![0f32; n];
    let idx: Vec<i64> = (0..n as i64).rev().collect();
    let upd = vec![1f32; n];
    let before = threads();
    for _ in 0..3 {
        scatter_elements(
            &TensorView::new(&data, &[n]).unwrap(),
            &TensorView::new(&idx, &[n]).unwrap(),
            &TensorView::new(&upd, &[n]).unwrap(),
            &ScatterOptions::new()
                .reduction(Reduction::Add)
                .par(Par::threads_exact(1000)),
        )
        .unwrap();
    }
    let started = threads() - before;
    assert!(
        started < cores,
        "{started} threads started on {cores} cores"
    );
}
