"""What `nous bench` and `nous eval` share, and the daemon never imports: the machine a number
was measured on (`machine`) and splicing a generated section into a markdown file (`splice`)."""
