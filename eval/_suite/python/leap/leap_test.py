import unittest

from leap import leap_year


class LeapTest(unittest.TestCase):
    def test_years(self):
        for year, want in [(2015, False), (1996, True), (2100, False), (2000, True), (1800, False)]:
            with self.subTest(year=year):
                self.assertIs(leap_year(year), want)
