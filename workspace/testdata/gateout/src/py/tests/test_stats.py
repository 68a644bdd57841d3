from app.stats import mean, at


def test_mean():
    assert mean([1, 2]) == 1.5


def test_mean_single():
    assert mean([4]) == 4


def test_at():
    assert at([1], 3) == 0
