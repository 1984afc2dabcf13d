"""CDK constructs. These import aws_cdk; the pure rooms must never import this package."""
