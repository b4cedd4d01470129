# tests/attention.mk -- tests of the reference flash attention.
