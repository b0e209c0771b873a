"""Linux process plumbing shared by every product: Landlock confinement and child spawning.

It sits in the ``pycodex`` core because that is the one layer all its users may import: the app-server
(exec tool sandbox), ``exec_client`` (the in-process ``LocalEnvironment``) and ``exec_server`` (process
starts and their sandbox). Nothing here knows a wire format or a policy shape; callers translate theirs.
"""
