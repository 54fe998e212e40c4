"""Building the book: both editions (``build_book``), the PDFs (``build_pdf``), the offline zip
(``package_site``), the kernels' cell timing (``kernel_startup``), the Sphinx extensions
(``book_sphinx``) and the generated figures (``figures``)."""
