"""Source checks that can also repair: the ``# @save`` cells against the package
(``sync_save_blocks``) and the line breaks of Chinese prose (``zh_prose``)."""
