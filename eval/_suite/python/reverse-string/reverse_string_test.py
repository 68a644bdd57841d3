import unittest

from reverse_string import reverse


class ReverseStringTest(unittest.TestCase):
    def test_reverse(self):
        for text, want in [("", ""), ("robot", "tobor"), ("I'm hungry!", "!yrgnuh m'I"), ("子猫", "猫子")]:
            with self.subTest(text=text):
                self.assertEqual(reverse(text), want)
