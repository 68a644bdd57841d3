import unittest

from triangle import equilateral, isosceles, scalene


class TriangleTest(unittest.TestCase):
    def check(self, fn, cases):
        for sides, want in cases:
            with self.subTest(fn=fn.__name__, sides=sides):
                self.assertIs(fn(sides), want)

    def test_equilateral(self):
        self.check(equilateral, [
            ([2, 2, 2], True),
            ([2, 3, 2], False),
            ([5, 4, 6], False),
            ([0, 0, 0], False),
            ([0.5, 0.5, 0.5], True),
        ])

    def test_isosceles(self):
        self.check(isosceles, [
            ([3, 4, 4], True),
            ([4, 4, 3], True),
            ([4, 3, 4], True),
            ([4, 4, 4], True),
            ([2, 3, 4], False),
            ([1, 1, 3], False),
            ([1, 3, 1], False),
            ([3, 1, 1], False),
            ([0.5, 0.4, 0.5], True),
        ])

    def test_scalene(self):
        self.check(scalene, [
            ([5, 4, 6], True),
            ([4, 4, 4], False),
            ([4, 4, 3], False),
            ([7, 3, 2], False),
            ([0.5, 0.4, 0.6], True),
        ])
