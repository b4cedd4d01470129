# tests/exp.mk -- tests of the exp models of the reference attention.
