"""What the tests share: builders of bytes and logs, local servers, expected values. Test modules
(``test_*.py``) import from here, never from each other (tests/test_suite_layout.py holds them to it)."""
