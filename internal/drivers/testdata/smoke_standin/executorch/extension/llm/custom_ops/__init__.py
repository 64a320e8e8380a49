"""Stand-in for the ExecuTorch wheel in smoke_run.py's test."""
