import unittest

from armstrong_numbers import is_armstrong_number


class ArmstrongNumbersTest(unittest.TestCase):
    def test_numbers(self):
        for number, want in [
            (0, True),
            (5, True),
            (10, False),
            (153, True),
            (100, False),
            (9474, True),
            (9475, False),
            (9926315, True),
            (9926314, False),
        ]:
            with self.subTest(number=number):
                self.assertIs(is_armstrong_number(number), want)
