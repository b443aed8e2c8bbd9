"""LiveMathematicianBench: arXiv theorems -> hard multiple-choice questions."""
