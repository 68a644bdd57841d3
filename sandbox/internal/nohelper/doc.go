// Package nohelper holds a test that links the sandbox without its helper.
package nohelper
