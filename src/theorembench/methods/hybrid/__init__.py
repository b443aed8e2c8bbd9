"""Proof2Hybrid: m-out-of-n multiple-judge questions from definitions and proposition–proof pairs."""
