import unittest

from raindrops import convert


class RaindropsTest(unittest.TestCase):
    def test_convert(self):
        for number, want in [(1, "1"), (3, "Pling"), (5, "Plang"), (7, "Plong"), (15, "PlingPlang"), (105, "PlingPlangPlong"), (52, "52")]:
            with self.subTest(number=number):
                self.assertEqual(convert(number), want)
