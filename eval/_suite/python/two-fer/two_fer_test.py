import unittest

from two_fer import two_fer


class TwoFerTest(unittest.TestCase):
    def test_no_name(self):
        self.assertEqual(two_fer(), "One for you, one for me.")

    def test_a_name(self):
        self.assertEqual(two_fer("Alice"), "One for Alice, one for me.")
