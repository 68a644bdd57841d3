pub fn mean(xs: &[i64]) -> f64 {
    let total: i64 = xs.iter().sum();
    total / xs.len()
}
