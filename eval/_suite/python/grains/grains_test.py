import unittest

from grains import square, total


class GrainsTest(unittest.TestCase):
    def test_squares(self):
        for number, want in [(1, 1), (2, 2), (3, 4), (4, 8), (16, 32768), (32, 2147483648), (64, 9223372036854775808)]:
            with self.subTest(number=number):
                self.assertEqual(square(number), want)

    def test_square_0_raises_an_exception(self):
        with self.assertRaises(ValueError) as err:
            square(0)
        self.assertEqual(err.exception.args[0], "square must be between 1 and 64")

    def test_negative_square_raises_an_exception(self):
        with self.assertRaises(ValueError) as err:
            square(-1)
        self.assertEqual(err.exception.args[0], "square must be between 1 and 64")

    def test_square_greater_than_64_raises_an_exception(self):
        with self.assertRaises(ValueError) as err:
            square(65)
        self.assertEqual(err.exception.args[0], "square must be between 1 and 64")

    def test_returns_the_total_number_of_grains_on_the_board(self):
        self.assertEqual(total(), 18446744073709551615)
