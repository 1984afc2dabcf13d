"""FSx for Lustre sizing: pure Python, never imports aws_cdk."""
