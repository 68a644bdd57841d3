pub fn mean(xs: &[i64]) -> f64 {
    let total: i64 = xs.iter().sum();
    (total / xs.len() as i64) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_of_two() {
        assert_eq!(mean(&[1, 2]), 1.5);
    }

    #[test]
    fn mean_of_one() {
        assert_eq!(mean(&[4]), 4.0);
    }
}
