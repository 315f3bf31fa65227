"""The sections of docs/validation.md that scripts/validate-cooja writes beyond its first ones."""
