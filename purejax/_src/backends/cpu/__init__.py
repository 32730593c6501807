"""The C compiler backend: jaxprs compiled to native code through the system C compiler."""
