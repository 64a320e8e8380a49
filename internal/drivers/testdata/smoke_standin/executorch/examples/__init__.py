"""Stand-in for the ExecuTorch wheel in the solve's tests."""
