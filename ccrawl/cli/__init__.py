"""The command-line front end: parsing and rendering only, over the operations in ccrawl.ops."""
