# tests/fuzz.mk -- libFuzzer targets (make fuzz) and the replay of their corpora in make check
