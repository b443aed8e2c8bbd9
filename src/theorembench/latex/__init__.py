"""LaTeX processing: flattening, macros, theorem environments, references, context."""
