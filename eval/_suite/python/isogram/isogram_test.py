import unittest

from isogram import is_isogram


class IsogramTest(unittest.TestCase):
    def test_words(self):
        for word, want in [("", True), ("isogram", True), ("eleven", False), ("Alphabet", False), ("six-year-old", True), ("Emily Jung Schwartzkopf", True)]:
            with self.subTest(word=word):
                self.assertIs(is_isogram(word), want)
