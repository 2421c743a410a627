"""Scale-up (LRS K1): when nothing fits and WorkerTemplates exist, the verdict per waiting replica,
the requests recorded, and the optional webhook."""
