################################################################################
#
# common.mk -- what corral.mk and its engine share
#
################################################################################
#
# Included by corral.mk and by mk/engine.mk, each of which sets first:
#   __corral_v        1: show every command (CORRAL_V, as corral.mk read it)
#   __corral_bindir   the directory of the corral programs with a trailing
#                     '/', or empty (found on PATH)
# It defines no target, and only these names:
#   __corral_Q        the prefix of every recipe line: '@' unless every
#                     command is shown
#   __corral-q        $(call __corral-q,TEXT): TEXT quoted for the shell, as
#                     one word, whatever characters it holds
#   __corral_b        __corral_bindir quoted, to go just before a program's
#                     name: $(__corral_b)corral-merge

__corral_Q := $(if $(filter 1,$(__corral_v)),,@)

__corral-q = '$(subst ','\'',$(1))'

__corral_b := $(if $(__corral_bindir),$(call __corral-q,$(__corral_bindir)))
