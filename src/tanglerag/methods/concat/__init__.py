"""Concatenation, the baseline every paper compares with: all passages in one prompt."""
