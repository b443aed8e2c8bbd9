"""Where papers come from: arXiv, local e-prints and folders, the Stacks Project."""
