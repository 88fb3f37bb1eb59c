"""What the commands do, as a library: dump, verify, sizing, JSON records,
inspect and layout views."""
